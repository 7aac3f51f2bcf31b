import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeUpstream } from './fake-upstream.js';
import { GATEHOUSE_NODE_ARGS, gatehouseBuild, goalLine, inParallel, intEnv, quantile, startIpcChild, tempDatabase } from './lib.js';

/**
 * `npm run bench` (part): what a gateway adds to a streamed model answer. A fake OpenAI-compatible
 * upstream in this process answers at once, its chunks written one by one. Gatehouse (the production
 * build's server as the Dockerfile runs it, bench/lib.ts gatehouseBuild — until 2026-11-29 the
 * sources through tsx —, a child process on a SQLite file) and the Portkey gateway (@portkey-ai/gateway, a child
 * process, loaded with bench/portkey-preload.mjs) are both put in front of it; this process is the
 * client. Timed per request: the first content delta and `[DONE]`, for
 *
 * - the upstream called directly (streamed and not);
 * - a streamed run through Gatehouse (`POST /v1/threads/runs` with `stream: true` on an `openai`
 *   integration on the upstream) and a streamed and a non-streamed chat completion through it;
 * - a streamed and a non-streamed chat completion through Portkey. Portkey waits 25 ms before its
 *   first streamed chunk by design, so its non-streamed figure is printed too;
 * - the floor: a streamed chat completion through a bare node:http pass-through proxy with no logic
 *   (bench/chat-proxy.ts, a child process as in bench/chat.ts): what any Node process in between
 *   adds on this machine, at the same concurrency, before doing anything a gateway does;
 * - the floor of a durable streamed run: the streamed run's request through bench/run-floor.ts (a
 *   child process on its own SQLite file beside Gatehouse's), bare node:http and better-sqlite3
 *   writing the rows and events Gatehouse writes in two transactions and nothing else: what any
 *   Node process adds on this machine for the irreducible work of a durable streamed run.
 *
 * Added latency = the p50 through a gateway less the p50 direct, at concurrency 1 and 10, targets
 * measured in interleaved rounds. The CPU per request of the Gatehouse child (from /proc) and of
 * the run floor's (asked over IPC), counted while each of their targets runs alone, is printed
 * too: unlike the latencies it does not grow with the machine's load. Goal for the streamed run:
 * ≤ 5 ms to the first delta and to `[DONE]`. The children are stopped at the end (and if the bench
 * stops early): Gatehouse and Portkey by pid, the proxy and the run floor over IPC.
 *
 * Environment: BENCH_STREAMED_REQUESTS (per target and concurrency, default 200),
 * BENCH_STREAMED_ROUNDS (default 4), BENCH_STREAMED_WARMUP (requests per target before each
 * concurrency's rounds, default 1,000: the servers are measured warm, as deployed ones run; after a
 * few hundred requests V8 is still compiling their code), BENCH_STREAMED_TARGETS (comma-separated
 * parts of target names: only the targets whose name contains one, and the direct ones, are measured),
 * BENCH_STREAMED_PROFILE (a directory: the Gatehouse child runs with `--cpu-prof` into it, the run
 * floor into its `floor/`, and the bench prints the CLOCK_MONOTONIC window, in µs as the profile's
 * timestamps, of each target's measured requests, so the warm-up can be left out of the profile).
 */
const REQUESTS = intEnv('BENCH_STREAMED_REQUESTS', 200);
const ROUNDS = intEnv('BENCH_STREAMED_ROUNDS', 4);
const WARMUP = intEnv('BENCH_STREAMED_WARMUP', 1000);
const CONCURRENCIES = [1, 10];
const ONLY = process.env.BENCH_STREAMED_TARGETS?.split(',').filter(Boolean);
/** Whether the target of this name is measured (BENCH_STREAMED_TARGETS). */
const measured = (name: string) => name.startsWith('direct') || !ONLY || ONLY.some((part) => name.includes(part));
// Absolute: the children do not all run in the bench's working directory.
const PROFILE = process.env.BENCH_STREAMED_PROFILE ? resolve(process.env.BENCH_STREAMED_PROFILE) : undefined;
const KEY = 'bench-bootstrap-key-0123456789';
const ROOT = fileURLToPath(new URL('..', import.meta.url));

// ---- the fake upstream --------------------------------------------------------------------------
const upstream = await startFakeUpstream();
const upstreamUrl = upstream.url;

// ---- the two gateways, each a child process -----------------------------------------------------
const database = tempDatabase('streamed', 900);
const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts a child process and waits until `ready` answers; its last stderr lines end the bench if it exits first. */
async function start(name: string, args: string[], env: NodeJS.ProcessEnv, ready: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (piece) => (stderr = (stderr + piece).slice(-4000)));
  child.once('exit', (code) => {
    if (!stopping) {
      console.error(`${name} exited (${code}) before the bench ended:\n${stderr}`);
      process.exit(1);
    }
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      await (await fetch(ready)).arrayBuffer();
      return child;
    } catch {
      if (Date.now() > deadline) throw new Error(`${name} did not start within 120 s:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
let stopping = false;

const gatehousePort = await freePort();
const gatehouse = `http://127.0.0.1:${gatehousePort}`;
// RUN_CONCURRENCY at the bench's highest concurrency: runs beyond it would wait for a slot.
const RUN_CONCURRENCY = Math.max(...CONCURRENCIES);
const build = gatehouseBuild();
const gatehouseChild = await start(
  'Gatehouse',
  [...GATEHOUSE_NODE_ARGS, ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : []), ...build.server],
  { ...build.env, PORT: String(gatehousePort), HOST: '127.0.0.1', DATABASE_URL: database.url, LOG_LEVEL: 'warn', GATEWAY_BOOTSTRAP_API_KEY: KEY, GATEWAY_SECRET_KEY: randomBytes(32).toString('hex'), RUN_CONCURRENCY: String(RUN_CONCURRENCY) },
  `${gatehouse}/healthz`,
);
const portkeyPort = await freePort();
const portkey = `http://127.0.0.1:${portkeyPort}`;
const portkeyBin = createRequire(import.meta.url).resolve('@portkey-ai/gateway/build/start-server.js');
if (measured('Portkey chat, streamed') || measured('Portkey chat, not streamed'))
  await start('Portkey gateway', ['--import', new URL('./portkey-preload.mjs', import.meta.url).href, portkeyBin, `--port=${portkeyPort}`, '--headless'], {}, `${portkey}/`);

// The bare proxy (bench/chat-proxy.ts) and the run floor (bench/run-floor.ts) announce their address
// over IPC. The run floor runs with Gatehouse's node options (its young generation); it runs
// through tsx, Gatehouse from dist/, which costs it nothing per request (tsx's keepNames wraps named
// closures, and it makes none per request).
const proxy = measured('bare proxy, streamed') ? await startIpcChild(new URL('./chat-proxy.ts', import.meta.url), [new URL(upstreamUrl).origin]) : null;
const runFloorDatabase = join(dirname(database.url.slice('sqlite:'.length)), 'run-floor.sqlite');
const runFloor = measured('bare run floor, streamed')
  ? await startIpcChild(new URL('./run-floor.ts', import.meta.url), [new URL(upstreamUrl).origin, runFloorDatabase], [...GATEHOUSE_NODE_ARGS, ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}/floor`] : [])])
  : null;

const admin = { 'x-gateway-api-key': KEY, 'content-type': 'application/json' };
async function setup(method: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(`${gatehouse}/v1${path}`, { method, headers: admin, body: JSON.stringify(body) });
  const json = await response.json();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${JSON.stringify(json)}`);
  return json;
}
await setup('POST', '/integrations', { name: 'Bench upstream', slug: 'upstream', ai_provider_id: 'openai', key: 'sk-bench', configurations: { base_url: upstreamUrl } });
await setup('PUT', '/integrations/upstream/workspaces', { workspaces: [{ id: 'default', enabled: true }] });
const runHeaders = { ...admin, 'x-gateway-virtual-key': 'upstream', 'OpenAI-Beta': 'assistants=v2' };
const assistant = await (await fetch(`${gatehouse}/v1/assistants`, { method: 'POST', headers: runHeaders, body: JSON.stringify({ model: 'gpt-4o-mini' }) })).json();

// ---- the targets ------------------------------------------------------------------------------
const messages = [{ role: 'user', content: 'Summarise the open tickets of the northern region in one line.' }];
const chatBody = (model: string, stream: boolean) => JSON.stringify({ model, messages, ...(stream && { stream: true, stream_options: { include_usage: true } }) });

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Text whose arrival is the first content delta (streamed targets); null: not streamed. */
  firstDelta: string | null;
  /** CPU time (ms) used so far by the process behind the target, counted per request; none: not counted. */
  cpuMs?: () => Promise<number | null>;
}
const CHAT_DELTA = '"content":"Hello"';
const direct = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };
const runBody = JSON.stringify({ assistant_id: assistant.id, thread: { messages }, stream: true });
const viaPortkey = { ...direct, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstreamUrl };
const allTargets: Target[] = [
  { name: 'direct, streamed', url: `${upstreamUrl}/chat/completions`, headers: direct, body: chatBody('gpt-4o-mini', true), firstDelta: CHAT_DELTA },
  { name: 'direct, not streamed', url: `${upstreamUrl}/chat/completions`, headers: direct, body: chatBody('gpt-4o-mini', false), firstDelta: null },
  {
    name: 'Gatehouse streamed run',
    url: `${gatehouse}/v1/threads/runs`,
    headers: runHeaders,
    body: runBody,
    firstDelta: 'event: thread.message.delta',
    cpuMs: gatehouseCpuMs,
  },
  { name: 'Gatehouse chat, streamed', url: `${gatehouse}/v1/chat/completions`, headers: admin, body: chatBody('@upstream/gpt-4o-mini', true), firstDelta: CHAT_DELTA, cpuMs: gatehouseCpuMs },
  { name: 'Gatehouse chat, not streamed', url: `${gatehouse}/v1/chat/completions`, headers: admin, body: chatBody('@upstream/gpt-4o-mini', false), firstDelta: null, cpuMs: gatehouseCpuMs },
  { name: 'Portkey chat, streamed', url: `${portkey}/v1/chat/completions`, headers: viaPortkey, body: chatBody('gpt-4o-mini', true), firstDelta: CHAT_DELTA },
  { name: 'Portkey chat, not streamed', url: `${portkey}/v1/chat/completions`, headers: viaPortkey, body: chatBody('gpt-4o-mini', false), firstDelta: null },
  { name: 'bare proxy, streamed', url: `${proxy?.base}/v1/chat/completions`, headers: direct, body: chatBody('gpt-4o-mini', true), firstDelta: CHAT_DELTA },
  // The Gatehouse streamed run's request as it is (the run floor reads no header).
  {
    name: 'bare run floor, streamed',
    url: `${runFloor?.base}/v1/threads/runs`,
    headers: runHeaders,
    body: runBody,
    firstDelta: 'event: thread.message.delta',
    cpuMs: async () => (await runFloor!.ask('cpu')).cpu,
  },
];
const targets = allTargets.filter((t) => measured(t.name));

interface Timing {
  /** The response's head: for a streamed run, the run has been created and admitted. */
  head: number;
  first: number;
  done: number;
}

/** One request: ms to its head, to the first delta (streamed) and to its end (`[DONE]` when streamed). */
async function timed(target: Target): Promise<Timing> {
  const t0 = performance.now();
  const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body }).catch((error: Error) => {
    throw new Error(`${target.name}: ${error.message} (${String(error.cause)})`);
  });
  const head = performance.now() - t0;
  if (response.status !== 200) throw new Error(`${target.name}: HTTP ${response.status} ${await response.text()}`);
  if (target.firstDelta === null) {
    await response.arrayBuffer();
    const done = performance.now() - t0;
    return { head, first: done, done };
  }
  const decoder = new TextDecoder();
  let text = '';
  let first = NaN;
  const reader = response.body!.getReader();
  for (let piece = await reader.read(); !piece.done; piece = await reader.read()) {
    text += decoder.decode(piece.value, { stream: true });
    if (Number.isNaN(first) && text.includes(target.firstDelta)) first = performance.now() - t0;
  }
  const done = performance.now() - t0;
  if (Number.isNaN(first) || !text.includes('data: [DONE]')) throw new Error(`${target.name}: no delta or no [DONE] in ${text.slice(0, 500)}`);
  return { head, first, done };
}

/**
 * CPU time (user + system, ms) the Gatehouse child has used so far, from /proc (Linux; null
 * elsewhere). Counted per target while only that target's requests run: what a request costs the
 * gateway, whatever else the machine is doing (wall times are not).
 */
const CLOCK_TICK_MS = 10;
async function gatehouseCpuMs(): Promise<number | null> {
  try {
    const fields = readFileSync(`/proc/${gatehouseChild.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
  } catch {
    return null;
  }
}

/** CLOCK_MONOTONIC in µs, the clock of a `--cpu-prof` profile's timestamps. */
const monotonicUs = () => process.hrtime.bigint() / 1000n;

/** `cpuMs`: the CPU per request of the process behind the target (Target.cpuMs), null when not counted. */
type Result = Timing & { cpuMs: number | null };

async function measure(concurrency: number): Promise<Map<Target, Result>> {
  const timings = new Map<Target, Timing[]>(targets.map((t) => [t, []]));
  const cpu = new Map<Target, number | null>(targets.map((t) => [t, 0]));
  for (const target of targets) await inParallel(concurrency, WARMUP, async () => void (await timed(target)));
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of targets) {
      const before = (await target.cpuMs?.()) ?? null;
      const from = monotonicUs();
      await inParallel(concurrency, Math.ceil(REQUESTS / ROUNDS), async () => void timings.get(target)!.push(await timed(target)));
      if (PROFILE) console.log(`  profile window c=${concurrency} ${target.name}: ${from} ${monotonicUs()}`);
      const after = (await target.cpuMs?.()) ?? null;
      const sum = cpu.get(target)!;
      cpu.set(target, before === null || after === null || sum === null ? null : sum + after - before);
    }
  }
  const p50 = (values: number[]) => quantile(values.sort((a, b) => a - b), 0.5);
  return new Map(
    targets.map((t) => {
      const all = timings.get(t)!;
      const used = cpu.get(t)!;
      return [t, { head: p50(all.map((x) => x.head)), first: p50(all.map((x) => x.first)), done: p50(all.map((x) => x.done)), cpuMs: used === null ? null : used / all.length }];
    }),
  );
}

console.log(`Streamed answers: a fake OpenAI-compatible upstream answering at once in ${upstream.chunks} chunks; Gatehouse (RUN_CONCURRENCY=${RUN_CONCURRENCY}, SQLite file) and the Portkey gateway 1.15.2 as child processes; ${REQUESTS} requests per target and concurrency in ${ROUNDS} interleaved rounds after ${WARMUP} warm-up requests each; p50 in ms`);
for (const concurrency of CONCURRENCIES) {
  const results = await measure(concurrency);
  // A target left out (BENCH_STREAMED_TARGETS) prints as NaN.
  const of = (name: string): Result => results.get(targets.find((t) => t.name === name)!) ?? { head: NaN, first: NaN, done: NaN, cpuMs: null };
  console.log(`concurrency ${concurrency}`);
  for (const target of targets) {
    const r = results.get(target)!;
    const streamed = `head ${r.head.toFixed(2).padStart(7)}   first delta ${r.first.toFixed(2).padStart(7)}   [DONE] ${r.done.toFixed(2).padStart(7)}`;
    console.log(`  ${target.name.padEnd(30)} ${target.firstDelta ? streamed : `answer ${r.done.toFixed(2).padStart(7)}`}`);
  }
  const streamed = of('direct, streamed');
  const plain = of('direct, not streamed');
  const added = (name: string, base: Result) => ({ first: of(name).first - base.first, done: of(name).done - base.done });
  const run = added('Gatehouse streamed run', streamed);
  goalLine(`  added by a Gatehouse streamed run, first delta`, `${run.first.toFixed(2)} ms`, '≤ 5 ms', run.first / 5);
  goalLine(`  added by a Gatehouse streamed run, [DONE]`, `${run.done.toFixed(2)} ms`, '≤ 5 ms', run.done / 5);
  const gatehouseChat = added('Gatehouse chat, streamed', streamed);
  const portkeyChat = added('Portkey chat, streamed', streamed);
  console.log(`  added to a streamed chat completion, first delta / [DONE]: Gatehouse ${gatehouseChat.first.toFixed(2)} / ${gatehouseChat.done.toFixed(2)} ms, Portkey ${portkeyChat.first.toFixed(2)} / ${portkeyChat.done.toFixed(2)} ms (Portkey waits 25 ms before its first chunk by design)`);
  console.log(`  added to a non-streamed chat completion: Gatehouse ${added('Gatehouse chat, not streamed', plain).done.toFixed(2)} ms, Portkey ${added('Portkey chat, not streamed', plain).done.toFixed(2)} ms`);
  console.log(`  Gatehouse streamed run / Portkey streamed chat, added to [DONE]: ${(run.done / portkeyChat.done).toFixed(2)}×`);
  const floor = added('bare proxy, streamed', streamed);
  console.log(`  the floor: a bare node:http proxy (no logic) adds to a streamed chat completion, first delta / [DONE]: ${floor.first.toFixed(2)} / ${floor.done.toFixed(2)} ms`);
  const durableFloor = added('bare run floor, streamed', streamed);
  console.log(`  the floor of a durable streamed run (bare node:http + better-sqlite3, no logic) adds, first delta / [DONE]: ${durableFloor.first.toFixed(2)} / ${durableFloor.done.toFixed(2)} ms`);
  const cpuOf = (name: string) => of(name).cpuMs?.toFixed(2) ?? 'n/a';
  console.log(`  Gatehouse process CPU per request: streamed run ${cpuOf('Gatehouse streamed run')} ms, streamed chat ${cpuOf('Gatehouse chat, streamed')} ms, chat ${cpuOf('Gatehouse chat, not streamed')} ms`);
  console.log(`  run floor process CPU per request: streamed run ${cpuOf('bare run floor, streamed')} ms`);
}

stopping = true;
for (const child of children) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
await proxy?.stop();
await runFloor?.stop();
upstream.close();
database.remove();
