import { createApp } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { runExecutor } from '../src/modules/runs/executor.js';
import { goalLine as line, inParallel, intEnv, listen, processCpuMs, quantile, serverNotingAnswers, tempDatabase } from './lib.js';

/**
 * `npm run bench` (run path): what one `POST /v1/threads/runs` on the offline `local` model costs
 * the gateway, beside the goals of the data-path issue. One gateway on 127.0.0.1 with a SQLite
 * file (WAL) in a temporary directory, no enforcement configured; client and server share the
 * process (as in the other benches), so CPU figures include the client's share on both sides.
 *
 * 1. SQL per run: every statement of one run (request, execution, settlement) through the
 *    runtime's onQuery hook, after warm-up (caches filled as on a running gateway).
 * 2. Overhead: `x-gateway-overhead-ms` p50/p99 of RUNS runs sent at concurrency 4.
 * 3. CPU per run: process CPU time (user + system) for RUNS runs, each created, executed and
 *    settled (drained), divided by RUNS; against the CPU of READS `GET /v1/assistants/{id}`.
 *
 * Environment: BENCH_RUNPATH_RUNS (200), BENCH_RUNPATH_READS (1000), BENCH_RUNPATH_CONCURRENCY (4);
 * BENCH_RUNPATH_SQL=1 also prints the statements of the measured run (those of the request first).
 */
const RUNS = intEnv('BENCH_RUNPATH_RUNS', 200);
const READS = intEnv('BENCH_RUNPATH_READS', 1000);
const CONCURRENCY = intEnv('BENCH_RUNPATH_CONCURRENCY', 4);
const KEY = 'bench-bootstrap-key-0123456789';
const BETA = { 'OpenAI-Beta': 'assistants=v2' };
const HEADERS = { 'x-gateway-api-key': KEY, 'x-gateway-virtual-key': 'local', ...BETA, 'content-type': 'application/json' };

const database = tempDatabase('runpath', 120);

let statements: string[] | null = null;
const app = await createApp(configFrom({ DATABASE_URL: database.url, LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: KEY }), {
  onQuery: (sql) => statements?.push(sql),
});
// Marks how many statements had run when a response was ended (the executor runs after it).
let answered = 0;
const server = serverNotingAnswers(app.yoga, () => (answered = statements?.length ?? 0));
const base = await listen(server);
const executor = runExecutor(app.runtime);

try {
  const assistant = await (await fetch(`${base}/v1/assistants`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ model: 'local-test' }) })).json();
  const body = JSON.stringify({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'Summarise the open tickets of the northern region.' }] } });
  const run = async () => {
    const response = await fetch(`${base}/v1/threads/runs`, { method: 'POST', headers: HEADERS, body });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`POST /v1/threads/runs: HTTP ${response.status}`);
    return Number(response.headers.get('x-gateway-overhead-ms'));
  };
  const read = async () => {
    const response = await fetch(`${base}/v1/assistants/${assistant.id}`, { headers: HEADERS });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`GET /v1/assistants/{id}: HTTP ${response.status}`);
    return 0;
  };
  /** `count` calls from CONCURRENCY workers; their results, and the process CPU (ms) until drained. */
  const measure = async (count: number, call: () => Promise<number>) => {
    const results: number[] = [];
    const cpu = processCpuMs();
    await inParallel(CONCURRENCY, count, async () => {
      results.push(await call());
    });
    await executor.whenIdle();
    return { results, cpuMs: processCpuMs() - cpu };
  };

  await measure(50, run); // warm-up: JIT, caches
  await measure(200, read);

  statements = [];
  await run();
  const inRequest = answered;
  await executor.whenIdle();
  const all: string[] = statements;
  statements = null;
  const control = /^\s*(begin|commit|rollback|savepoint|release)/i;
  const counted = all.filter((sql) => !control.test(sql)).length;
  const transactions = all.filter((sql) => /^\s*begin/i.test(sql)).length;
  const requestCounted = all.slice(0, inRequest).filter((sql) => !control.test(sql)).length;
  if (process.env.BENCH_RUNPATH_SQL === '1') {
    all.forEach((sql, i) => console.log(`${i < inRequest ? 'request ' : 'executor'} ${sql.replace(/\s+/g, ' ').slice(0, 240)}`));
  }

  const runs = await measure(RUNS, run);
  const reads = await measure(READS, read);
  const sorted = runs.results.sort((a, b) => a - b);
  const at = (q: number) => quantile(sorted, q);
  const cpuRun = runs.cpuMs / RUNS;
  const cpuRead = reads.cpuMs / READS;

  console.log(`Run path: POST /v1/threads/runs on local, SQLite file (WAL), no enforcement; ${RUNS} runs and ${READS} reads at concurrency ${CONCURRENCY}`);
  line('SQL statements per run (create + execute)', `${counted}`, '≤ 15', counted / 15);
  line('  transactions per run', `${transactions}`, '≤ 2', transactions / 2);
  line('  statements inside the request', `${requestCounted}`, '≤ 5', requestCounted / 5);
  line('x-gateway-overhead-ms p50', `${at(0.5).toFixed(1)} ms`, '≤ 5 ms', at(0.5) / 5);
  line('x-gateway-overhead-ms p99', `${at(0.99).toFixed(1)} ms`, '≤ 20 ms', at(0.99) / 20);
  line('CPU per run / CPU per GET /v1/assistants/{id}', `${cpuRun.toFixed(2)} / ${cpuRead.toFixed(2)} ms`, '≤ 3×', cpuRun / cpuRead / 3);
} finally {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await app.close();
  database.remove();
}
