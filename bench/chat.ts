import { startFakeUpstream } from './fake-upstream.js';
import { GATEHOUSE_NODE_ARGS, gatehouseBuild, goalLine, inParallel, intEnv, processCpuMs, quantile, startIpcChild } from './lib.js';

/**
 * `npm run bench` (chat part): the latency Gatehouse adds to `POST /v1/chat/completions`. A small
 * local fake upstream answers at once; the same request goes to it directly and through the
 * gateway (an `openai` integration on that upstream, with every check on: a tokens usage-limit
 * policy, a rate limit that never refuses, and a passing input guardrail). Non-streamed and
 * streamed, at concurrency 1 and 50, in alternating batches (direct, gateway, gateway, direct…)
 * so drift falls on both. Prints p50/p99 of each and the added p50/p99 and the throughput ratio
 * beside the goal (added p50 ≤ 1 ms, p99 ≤ 5 ms, throughput ≥ 0.8× direct). Asserts nothing.
 *
 * The floor: the same request also goes through a bare node:http pass-through proxy
 * (bench/chat-proxy.ts, its own process like the gateway, no logic), printed beside the gateway
 * with the same figures: what any Node process in between costs on this machine.
 *
 * Layout: the gateway runs in its own process (bench/chat-gateway.ts, as a deployment runs it: the
 * production build with NODE_ENV=production and its node options, bench/lib.ts gatehouseBuild and
 * GATEHOUSE_NODE_ARGS, on SQLite in memory; until 2026-11-29 the sources through tsx); the client
 * and the fake upstream share this one. Until 2026-11-24 all three
 * shared one process, which charged the gateway's CPU against the core the client and upstream
 * need while the direct calls had the process to themselves.
 *
 * Load-independent figures too: the SQL statements one chat request sends before its answer is
 * ended, and after it (counted in the gateway through the runtime's onQuery hook, after warm-up;
 * goal: none in the request on SQLite when the process is alone on its database), and CPU time per
 * request: the gateway process's (process.cpuUsage() over the gateway batches: every thread, V8's
 * compiler and GC helpers included) and its main thread's alone (schedstat, where there is one),
 * and this process's (client and upstream) in each kind of batch.
 *
 * Environment: BENCH_CHAT_REQUESTS (per configuration and concurrency, default 600),
 * BENCH_CHAT_ROUNDS (batches, default 6), BENCH_CHAT_WARMUP (requests per target before each
 * configuration's batches, default 2,000: a deployed gateway runs warm, and after 100 requests V8
 * was still compiling the gateway's code, a fifth of its process's samples; warm, its CPU per request
 * was a third and its added p50 under half of what 100 showed), BENCH_CHAT_ENFORCEMENT=off (no policy, rate limit or
 * guardrail: what the gateway's own path costs), BENCH_CHAT_SQL=1 (also prints the counted
 * statements), BENCH_CHAT_PROFILE=<dir> (a CPU profile of the gateway process over each
 * configuration's measured batches, after its warm-up, written there as
 * chat-<streamed|non-streamed>-c<concurrency>.cpuprofile; with BENCH_CHAT_PROFILE_HEAP=all a
 * sampling heap profile instead, .heapprofile, of what the gateway allocates by stack, and with
 * =survivors of what outlived a scavenge),
 * BENCH_CHAT_CONCURRENCY (comma-separated, default 1,50), BENCH_CHAT_STREAM=off|only (only the
 * non-streamed or only the streamed runs; both by default), BENCH_CHAT_NODE_ARGS (more node options
 * for the gateway process, e.g. --perf-basic-prof for `perf record -p <the printed pid>`).
 */
const REQUESTS = intEnv('BENCH_CHAT_REQUESTS', 600);
const ROUNDS = intEnv('BENCH_CHAT_ROUNDS', 6);
const WARMUP = intEnv('BENCH_CHAT_WARMUP', 2000);
const CONCURRENCIES = process.env.BENCH_CHAT_CONCURRENCY ? process.env.BENCH_CHAT_CONCURRENCY.split(',').map(Number) : [1, 50];
const STREAMS = process.env.BENCH_CHAT_STREAM === 'only' ? [true] : process.env.BENCH_CHAT_STREAM === 'off' ? [false] : [false, true];
const KEY = 'bench-bootstrap-key-0123456789';

const upstream = await startFakeUpstream();
const upstreamUrl = upstream.url;

// The gateway (bench/chat-gateway.ts), and the floor beside it: a bare node:http pass-through proxy (bench/chat-proxy.ts).
const profile = process.env.BENCH_CHAT_PROFILE;
const gatewayArgs = process.env.BENCH_CHAT_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
const gateway = await startIpcChild(new URL('./chat-gateway.ts', import.meta.url), [JSON.stringify({ url: 'sqlite::memory:', key: KEY })], [...GATEHOUSE_NODE_ARGS, ...gatewayArgs], gatehouseBuild().env);
if (process.env.BENCH_CHAT_NODE_ARGS) console.log(`gateway pid ${gateway.pid}`);
const proxy = await startIpcChild(new URL('./chat-proxy.ts', import.meta.url), [new URL(upstreamUrl).origin]);
const { ask } = gateway;
const gatewayBase = gateway.base;
const gatewayUrl = `${gatewayBase}/v1`;
const admin = { 'x-gateway-api-key': KEY, 'content-type': 'application/json' };

console.log(`layout: the gateway in its own process (${process.env.BENCH_SOURCES === '1' ? 'the sources through tsx' : 'the production build, NODE_ENV=production'}, ${GATEHOUSE_NODE_ARGS.join(' ')}, SQLite in memory); the client and the fake upstream in the bench's process`);

async function setup(method: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(`${gatewayUrl}${path}`, { method, headers: admin, body: JSON.stringify(body) });
  const json = await response.json();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${JSON.stringify(json)}`);
  return json;
}
await setup('POST', '/integrations', { name: 'Bench upstream', slug: 'upstream', ai_provider_id: 'openai', key: 'sk-bench', configurations: { base_url: upstreamUrl } });
const ENFORCEMENT = process.env.BENCH_CHAT_ENFORCEMENT !== 'off';
if (ENFORCEMENT) {
  await setup('PUT', '/integrations/upstream/workspaces', { workspaces: [{ id: 'default', enabled: true, rate_limits: [{ type: 'requests', unit: 'rpm', value: 1_000_000 }] }] });
  await setup('POST', '/policies/usage-limits', { name: 'Huge', conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }], type: 'tokens', credit_limit: 1e12 });
  const guard = await setup('POST', '/guardrails', { name: 'Has words', checks: [{ id: 'default.regexMatch', parameters: { rule: 'tickets' } }], actions: { deny: false } });
  await setup('PUT', '/providers/upstream', { input_guardrails: [guard.slug] });
} else {
  await setup('PUT', '/integrations/upstream/workspaces', { workspaces: [{ id: 'default', enabled: true }] });
}
console.log(`warm-up: ${WARMUP} requests per target before each configuration (BENCH_CHAT_WARMUP)`);
console.log(`enforcement: ${ENFORCEMENT ? 'a tokens policy, a rate limit and an input guardrail' : 'none (BENCH_CHAT_ENFORCEMENT=off)'}`);

const messages = [{ role: 'user', content: 'Summarise the open tickets of the northern region in one line.' }];
type Target = 'direct' | 'proxy' | 'gateway';
const TARGETS: Target[] = ['direct', 'proxy', 'gateway'];
/** The process in between, whose CPU a batch through it is charged (none for direct calls). */
const middle: Record<Target, typeof gateway | null> = { direct: null, proxy, gateway };

function send(target: Target, stream: boolean): Promise<Response> {
  const base = target === 'direct' ? upstreamUrl : target === 'proxy' ? `${proxy.base}/v1` : gatewayUrl;
  const model = target === 'gateway' ? '@upstream/gpt-4o-mini' : 'gpt-4o-mini';
  const headers = target === 'direct' ? { 'content-type': 'application/json', authorization: 'Bearer sk-bench' } : admin;
  return fetch(`${base}/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model, messages, ...(stream && { stream: true, stream_options: { include_usage: true } }) }) });
}

/** x-gateway-overhead-ms of the gateway's answers: its own time, without the upstream's. */
const overheads: number[] = [];

/** CPU (ms, user + system) of the bench's process (`client`) and of the process in between (`server`), in each kind of batch, and the requests it served. */
type Cpu = { client: number; server: number; serverMain: number; requests: number };
const noCpu = (): Record<Target, Cpu> => ({
  direct: { client: 0, server: 0, serverMain: 0, requests: 0 },
  proxy: { client: 0, server: 0, serverMain: 0, requests: 0 },
  gateway: { client: 0, server: 0, serverMain: 0, requests: 0 },
});
let cpu = noCpu();

async function batch(target: Target, stream: boolean, count: number, concurrency: number, latencies: number[]): Promise<number> {
  const server = middle[target];
  const serverAtStart: { cpu: number; main: number } = server ? await server.ask('cpu') : { cpu: 0, main: 0 };
  const started = performance.now();
  const cpuAtStart = processCpuMs();
  await inParallel(concurrency, count, async () => {
    const t0 = performance.now();
    const response = await send(target, stream);
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${target}: HTTP ${response.status} ${body}`);
    latencies.push(performance.now() - t0);
    if (target === 'gateway') overheads.push(Number(response.headers.get('x-gateway-overhead-ms')));
  });
  const elapsed = performance.now() - started;
  cpu[target].client += processCpuMs() - cpuAtStart;
  if (server) {
    const serverAtEnd = await server.ask('cpu');
    cpu[target].server += serverAtEnd.cpu - serverAtStart.cpu;
    cpu[target].serverMain += serverAtEnd.main - serverAtStart.main;
  }
  cpu[target].requests += count;
  return elapsed;
}

/** Waits until the gateway has nothing left to write (the request log's batches, settlements). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

/** The statements of one request (after warm-up): those sent before its answer ended, and after. */
async function countStatements(stream: boolean): Promise<{ inRequest: string[]; after: string[] }> {
  await settle();
  await ask('count');
  const response = await send('gateway', stream);
  await response.text();
  if (response.status !== 200) throw new Error(`gateway: HTTP ${response.status}`);
  await settle();
  const { statements, answered } = (await ask('counted')) as { statements: string[]; answered: number };
  return { inRequest: statements.slice(0, answered), after: statements.slice(answered) };
}

const isControl = (sql: string) => /^\s*(begin|commit|rollback|savepoint|release)/i.test(sql);
// Against a goal of none, any count is infinitely over it (a ratio of 1 would print "met").
const noneGoal = (what: string, count: number) => goalLine(what, String(count), '0', count === 0 ? 0 : Infinity);

for (const stream of STREAMS) {
  for (const target of TARGETS) await batch(target, stream, 50, 1, []); // warm-up: caches, JIT
  const counted = await countStatements(stream);
  const kind = stream ? 'streamed' : 'non-streamed';
  noneGoal(`SQL statements inside a ${kind} chat request`, counted.inRequest.filter((sql) => !isControl(sql)).length);
  console.log(
    `  transactions inside it ${counted.inRequest.filter((sql) => /^\s*begin/i.test(sql)).length}; after the answer: ${counted.after.filter((sql) => !isControl(sql)).length} statements, ${counted.after.filter((sql) => /^\s*begin/i.test(sql)).length} transactions`,
  );
  if (process.env.BENCH_CHAT_SQL === '1') for (const sql of [...counted.inRequest.map((q) => `  in:    ${q}`), ...counted.after.map((q) => `  after: ${q}`)]) console.log(sql.slice(0, 200));
  for (const concurrency of CONCURRENCIES) {
    for (const target of TARGETS) await batch(target, stream, WARMUP, concurrency, []); // warm-up
    const latencies: Record<Target, number[]> = { direct: [], proxy: [], gateway: [] };
    overheads.length = 0;
    cpu = noCpu();
    const elapsed: Record<Target, number> = { direct: 0, proxy: 0, gateway: 0 };
    const per = Math.ceil(REQUESTS / ROUNDS);
    if (profile) await ask('profile', { dir: profile, name: `chat-${stream ? 'streamed' : 'non-streamed'}-c${concurrency}`, ...(process.env.BENCH_CHAT_PROFILE_HEAP && { heap: process.env.BENCH_CHAT_PROFILE_HEAP }) });
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? TARGETS : [...TARGETS].reverse();
      for (const target of order) elapsed[target] += await batch(target, stream, per, concurrency, latencies[target]);
    }
    if (profile) console.log(`profile: ${(await ask('profiled')).file}`);
    const stats = (target: Target) => {
      const sorted = [...latencies[target]].sort((a, b) => a - b);
      return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), rps: (sorted.length / elapsed[target]) * 1000 };
    };
    const direct = stats('direct');
    const label = `${stream ? 'streamed' : 'non-streamed'}, concurrency ${concurrency}`;
    console.log(`chat ${label}`);
    for (const target of TARGETS) {
      const s = stats(target);
      console.log(`  ${target.padEnd(8)} ${s.rps.toFixed(0).padStart(6)} req/s   p50 ${s.p50.toFixed(2)} ms   p99 ${s.p99.toFixed(2)} ms`);
    }
    const own = [...overheads].sort((a, b) => a - b);
    console.log(`  x-gateway-overhead-ms p50 ${quantile(own, 0.5).toFixed(2)} ms   p99 ${quantile(own, 0.99).toFixed(2)} ms`);
    const perRequest = (target: Target, who: 'client' | 'server' | 'serverMain') => (cpu[target][who] / cpu[target].requests).toFixed(3);
    for (const target of ['gateway', 'proxy'] as const) {
      const s = stats(target);
      const goals = target === 'gateway' ? [' (goal ≤ 1 ms)', ' (goal ≤ 5 ms)', ' (goal ≥ 0.80×)'] : ['', '', ''];
      console.log(
        `  ${target === 'gateway' ? 'gateway:   ' : 'bare proxy:'} added p50 ${(s.p50 - direct.p50).toFixed(2)} ms${goals[0]}   added p99 ${(s.p99 - direct.p99).toFixed(2)} ms${goals[1]}   throughput ${(s.rps / direct.rps).toFixed(2)}× direct${goals[2]}`,
      );
      // The gateway's CPU against the bare proxy's, measured in the same alternating batches: steadier than either under load.
      const againstProxy = target === 'gateway' ? ` (${(cpu.gateway.server / cpu.gateway.requests / (cpu.proxy.server / cpu.proxy.requests)).toFixed(2)}× the bare proxy's)` : '';
      console.log(`    CPU per request: its process ${perRequest(target, 'server')} ms${againstProxy}, its main thread ${perRequest(target, 'serverMain')} ms; the bench's process (client, upstream) ${perRequest(target, 'client')} ms (${perRequest('direct', 'client')} ms direct)`);
    }
  }
}

await Promise.all([gateway.stop(), proxy.stop()]);
upstream.close();
