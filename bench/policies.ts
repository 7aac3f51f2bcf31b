import { createServer } from 'node:http';
import { createApp } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { executeSql } from '../src/db/sql.js';
import { uuid } from '../src/lib/ids.js';
import { runExecutor } from '../src/modules/runs/executor.js';
import { policyTerms } from '../src/modules/usage/conditions.js';
import { goalLine, intEnv, listen, processCpuMs, quantile, tempDatabase } from './lib.js';

/**
 * `npm run bench` (policies): does run creation, and a page of the policy list, depend on how many
 * usage-limit policies the organisation has? Gateways on 127.0.0.1, each with a SQLite file (WAL).
 * Policies are written straight to the database (with their index terms, as the service writes
 * them; the list's counts follow by trigger), each limiting one API key that never calls
 * (`api_key = <random id>`): unrelated to the measured requests. Measured:
 *
 * - `POST /v1/threads/runs` on `local`, one at a time, on one gateway at 0 and then at BENCH_POLICIES
 *   (100,000) policies: p50 of `x-gateway-overhead-ms` (goal: at 100,000 ≤ 1.5× at 0);
 * - `GET /v1/policies/usage-limits?page_size=100`, on that gateway (100,000 policies) at pages 0, 9,
 *   the middle and the last, and on a second one holding 1,000 policies at pages 0 and 9: median
 *   time (goal: every page at 100,000 ≤ 1.5× page 0 at 1,000). The list is warmed up first (its
 *   first requests compile code the later ones reuse), and the six pages are requested in turn, so
 *   load that comes and goes on a shared machine weighs on each alike. The process's CPU time per
 *   list request (client and servers: one process) is printed beside.
 *
 * Environment: BENCH_POLICIES (100000), BENCH_POLICIES_SAMPLES (40 per point).
 */
const TOTAL = intEnv('BENCH_POLICIES', 100_000);
const SAMPLES = intEnv('BENCH_POLICIES_SAMPLES', 40);
const KEY = 'bench-bootstrap-key-0123456789';
const HEADERS = { 'x-gateway-api-key': KEY, 'x-gateway-virtual-key': 'local', 'OpenAI-Beta': 'assistants=v2', 'content-type': 'application/json' };

const median = (values: number[]) => quantile([...values].sort((a, b) => a - b), 0.5);

/** A gateway on a SQLite file of its own, and `grow` that writes policies into its default workspace. */
async function gateway(name: string) {
  const database = tempDatabase(name, 150);
  const app = await createApp(configFrom({ DATABASE_URL: database.url, LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: KEY }));
  const server = createServer(app.yoga);
  // Writing 100,000 policies leaves the client's keep-alive sockets idle longer than Node's 5 s default.
  server.keepAliveTimeout = 120_000;
  const base = await listen(server);
  const workspace = await (await fetch(`${base}/v1/admin/workspaces/default`, { headers: HEADERS })).json();
  const [{ organisation_id: organisationId }] = await executeSql<{ organisation_id: string }[]>(app.runtime.fork(), 'select organisation_id from workspaces where id = ?', [workspace.id]);
  let written = 0;
  return {
    app,
    base,
    /** Writes policies (and their index terms) until there are `upTo`. */
    async grow(upTo: number) {
      const now = Date.now();
      while (written < upTo) {
        const batch = Math.min(500, upTo - written);
        const policies = Array.from({ length: batch }, (_v, i) => ({ id: uuid(), conditions: [{ key: 'api_key', value: uuid() }], at: now + written + i }));
        await app.runtime.fork().transactional(async (tx) => {
          await executeSql(
            tx,
            `insert into usage_limits_policies (id, organisation_id, workspace_id, name, type, status, conditions, group_by, credit_limit, alert_threshold, periodic_reset, last_reset_at, created_at, updated_at) values ${policies.map(() => "(?, ?, ?, 'Unrelated', 'tokens', 'active', ?, ?, 1000, null, null, null, ?, ?)").join(', ')}`,
            policies.flatMap((p) => [p.id, organisationId, workspace.id, JSON.stringify(p.conditions), JSON.stringify([{ key: 'api_key' }]), p.at, p.at]),
            'run',
          );
          const terms = policies.flatMap((p) => policyTerms(p.conditions).map((t, _i, all) => [p.id, t.key, t.value, workspace.id, all.length]));
          await executeSql(tx, `insert into usage_policy_terms (policy_id, key, value, workspace_id, terms) values ${terms.map(() => '(?, ?, ?, ?, ?)').join(', ')}`, terms.flat(), 'run');
        });
        written += batch;
      }
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
      database.remove();
    },
  };
}

const large = await gateway('policies');
const small = await gateway('policies-1k');

try {
  const { app, base } = large;
  const assistant = await (await fetch(`${base}/v1/assistants`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ model: 'local-test' }) })).json();
  const body = JSON.stringify({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'Summarise the open tickets.' }] } });
  const runOverhead = async () => {
    const values: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const response = await fetch(`${base}/v1/threads/runs`, { method: 'POST', headers: HEADERS, body });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`POST /v1/threads/runs: HTTP ${response.status}`);
      values.push(Number(response.headers.get('x-gateway-overhead-ms')));
      await runExecutor(app.runtime).whenIdle();
    }
    return median(values);
  };
  /** Median time and mean CPU time per request of each page (a gateway's base URL and a page number), requested in turn. */
  const pageTimes = async <K extends string>(pages: Record<K, [string, number]>) => {
    const values = new Map<K, number[]>();
    const cpu = new Map<K, number>();
    for (let i = 0; i < SAMPLES; i++) {
      for (const [name, [at, page]] of Object.entries(pages) as Array<[K, [string, number]]>) {
        const cpu0 = processCpuMs();
        const t0 = performance.now();
        const response = await fetch(`${at}/v1/policies/usage-limits?page_size=100&current_page=${page}`, { headers: HEADERS });
        const list = (await response.json()) as { total?: number; data?: unknown[] };
        if (response.status !== 200 || list.data?.length !== Math.min(100, (list.total ?? 0) - page * 100)) {
          throw new Error(`GET /v1/policies/usage-limits page ${page}: HTTP ${response.status}, ${list.data?.length} of ${list.total} policies`);
        }
        const time = performance.now() - t0;
        const used = processCpuMs() - cpu0;
        values.set(name, [...(values.get(name) ?? []), time]);
        cpu.set(name, (cpu.get(name) ?? 0) + used / SAMPLES);
      }
    }
    return Object.fromEntries([...values].map(([name, times]) => [name, { time: median(times), cpu: cpu.get(name)! }])) as Record<K, { time: number; cpu: number }>;
  };

  await runOverhead(); // warm-up
  const runAt0 = await runOverhead();
  await small.grow(1_000);
  await large.grow(TOTAL);
  const runAtTotal = await runOverhead();
  const last = Math.floor((TOTAL - 1) / 100);
  const pages = {
    '1,000 first': [small.base, 0],
    '1,000 ninth': [small.base, 9],
    first: [base, 0],
    ninth: [base, 9],
    middle: [base, Math.floor(last / 2)],
    last: [base, last],
  } satisfies Record<string, [string, number]>;
  await pageTimes(pages); // warm-up
  const { '1,000 first': first1k, '1,000 ninth': ninth1k, ...atTotal } = await pageTimes(pages);

  const total = TOTAL.toLocaleString('en');
  console.log(`Policies: ${total} unrelated usage-limit policies in the workspace; medians of ${SAMPLES} requests, one at a time`);
  goalLine(`run creation overhead p50, ${total} policies / 0`, `${runAtTotal.toFixed(2)} / ${runAt0.toFixed(2)} ms`, '≤ 1.5×', runAtTotal / runAt0 / 1.5);
  for (const [name, page] of Object.entries(atTotal)) {
    const ratio = page.time / first1k.time;
    goalLine(`list page ${name}: ${total} / page 0 at 1,000 = ${ratio.toFixed(2)}×`, `${page.time.toFixed(2)} / ${first1k.time.toFixed(2)} ms`, '≤ 1.5×', ratio / 1.5);
  }
  const cpu = Object.entries(atTotal).map(([name, page]) => `${name} ${page.cpu.toFixed(2)}`).join(', ');
  console.log(`  list at 1,000: page 9 ${ninth1k.time.toFixed(2)} ms; CPU per list request (client and servers, ms): at 1,000 first ${first1k.cpu.toFixed(2)}, ninth ${ninth1k.cpu.toFixed(2)}; at ${total} ${cpu}`);
} finally {
  await large.close();
  await small.close();
}
