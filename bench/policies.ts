import { createServer } from 'node:http';
import { createApp } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { executeSql } from '../src/db/sql.js';
import { uuid } from '../src/lib/ids.js';
import { runExecutor } from '../src/modules/runs/executor.js';
import { policyTerms } from '../src/modules/usage/conditions.js';
import { goalLine, intEnv, listen, quantile, tempDatabase } from './lib.js';

/**
 * `npm run bench` (policies): does run creation, and a page of the policy list, depend on how many
 * usage-limit policies the organisation has? One gateway on 127.0.0.1 with a SQLite file (WAL).
 * Policies are written straight to the database (with their index terms, as the service writes
 * them), each limiting one API key that never calls (`api_key = <random id>`): unrelated to the
 * measured requests. Measured at 0 / 1,000 and then at BENCH_POLICIES (100,000) policies:
 *
 * - `POST /v1/threads/runs` on `local`, one at a time: p50 of `x-gateway-overhead-ms` (goal: at
 *   100,000 policies ≤ 1.5× at 0);
 * - `GET /v1/policies/usage-limits?page_size=100` at pages 0 and 9, then at 100,000 policies at pages
 *   0, 9, the middle and the last: median time (goal: at 100,000 policies ≤ 1.5× page 0 at 1,000, for
 *   every page). The list is warmed up first (its first requests compile code the later ones reuse)
 *   and the pages of one size are sampled in turn, so load that comes and goes weighs on each alike.
 *   The process's CPU time per list request (client and server: one process) is printed beside.
 *
 * Environment: BENCH_POLICIES (100000), BENCH_POLICIES_SAMPLES (40 per point).
 */
const TOTAL = intEnv('BENCH_POLICIES', 100_000);
const SAMPLES = intEnv('BENCH_POLICIES_SAMPLES', 40);
const KEY = 'bench-bootstrap-key-0123456789';
const HEADERS = { 'x-gateway-api-key': KEY, 'x-gateway-virtual-key': 'local', 'OpenAI-Beta': 'assistants=v2', 'content-type': 'application/json' };

const database = tempDatabase('policies', 150);

const app = await createApp(configFrom({ DATABASE_URL: database.url, LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: KEY }));
const server = createServer(app.yoga);
// Writing 100,000 policies leaves the client's keep-alive sockets idle longer than Node's 5 s default.
server.keepAliveTimeout = 120_000;
const base = await listen(server);

const median = (values: number[]) => quantile([...values].sort((a, b) => a - b), 0.5);

try {
  const workspace = await (await fetch(`${base}/v1/admin/workspaces/default`, { headers: HEADERS })).json();
  const assistant = await (await fetch(`${base}/v1/assistants`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ model: 'local-test' }) })).json();
  const body = JSON.stringify({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'Summarise the open tickets.' }] } });
  const em = app.runtime.fork();
  const [{ organisation_id: organisationId }] = await executeSql<{ organisation_id: string }[]>(em, 'select organisation_id from workspaces where id = ?', [workspace.id]);

  let written = 0;
  /** Writes policies (and their index terms) until there are `upTo`. */
  const grow = async (upTo: number) => {
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
  };
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
  /** Median time and mean CPU time per request of each page, the pages requested in turn. */
  const pageTimes = async <K extends string>(pages: Record<K, number>) => {
    const values = new Map<K, number[]>();
    const cpu = new Map<K, number>();
    for (let i = 0; i < SAMPLES; i++) {
      for (const [name, page] of Object.entries(pages) as Array<[K, number]>) {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        const response = await fetch(`${base}/v1/policies/usage-limits?page_size=100&current_page=${page}`, { headers: HEADERS });
        const list = (await response.json()) as { total?: number; data?: unknown[] };
        if (response.status !== 200 || list.data?.length !== Math.min(100, (list.total ?? 0) - page * 100)) {
          throw new Error(`GET /v1/policies/usage-limits page ${page}: HTTP ${response.status}, ${list.data?.length} of ${list.total} policies`);
        }
        const time = performance.now() - t0;
        const used = process.cpuUsage(cpu0);
        values.set(name, [...(values.get(name) ?? []), time]);
        cpu.set(name, (cpu.get(name) ?? 0) + (used.user + used.system) / 1000 / SAMPLES);
      }
    }
    return Object.fromEntries([...values].map(([name, times]) => [name, { time: median(times), cpu: cpu.get(name)! }])) as Record<K, { time: number; cpu: number }>;
  };

  await runOverhead(); // warm-up
  const runAt0 = await runOverhead();
  await grow(1_000);
  await pageTimes({ first: 0, ninth: 9 }); // warm-up
  const at1k = await pageTimes({ first: 0, ninth: 9 });
  await grow(TOTAL);
  const runAtTotal = await runOverhead();
  const last = Math.floor((TOTAL - 1) / 100);
  const atTotal = await pageTimes({ first: 0, ninth: 9, middle: Math.floor(last / 2), last });

  const total = TOTAL.toLocaleString('en');
  console.log(`Policies: ${total} unrelated usage-limit policies in the workspace; medians of ${SAMPLES} requests, one at a time`);
  goalLine(`run creation overhead p50, ${total} policies / 0`, `${runAtTotal.toFixed(2)} / ${runAt0.toFixed(2)} ms`, '≤ 1.5×', runAtTotal / runAt0 / 1.5);
  for (const [name, page] of Object.entries(atTotal)) {
    const ratio = page.time / at1k.first.time;
    goalLine(`list page ${name}: ${total} / page 0 at 1,000 = ${ratio.toFixed(2)}×`, `${page.time.toFixed(2)} / ${at1k.first.time.toFixed(2)} ms`, '≤ 1.5×', ratio / 1.5);
  }
  const cpu = (times: Record<string, { cpu: number }>) => Object.entries(times).map(([name, page]) => `${name} ${page.cpu.toFixed(2)}`).join(', ');
  console.log(`  list CPU per request (client and server, ms): at 1,000 ${cpu(at1k)}; at ${total} ${cpu(atTotal)}`);
} finally {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await app.close();
  database.remove();
}
