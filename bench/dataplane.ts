import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, type App } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { intEnv, listen, processCpuMs, quantile } from './lib.js';

/**
 * `npm run bench` (second part): what data-plane enforcement costs a request. It starts two
 * gateways on 127.0.0.1, each with its own database, and sends a bounded number of
 * `POST /v1/threads/runs` (a new thread and a run on the offline `local` model) to each at a fixed
 * concurrency:
 *
 *   (a) no enforcement configured;
 *   (b) a `tokens` usage-limit policy with a huge budget, a workspace-access rate limit that never
 *       refuses, and a non-deny `default.wordCount` input guardrail (passing) on the provider —
 *       every check of the data plane runs and admits (a reservation, a rate-limit counter and an
 *       evaluation are written, the usage is settled when the run ends).
 *
 * The requests go in alternating batches (a b, b a, a b, …), each batch starting with no run
 * queued or in progress, so drift (JIT warm-up, other load on the machine, a growing database)
 * falls on both alike. For each configuration it prints throughput (requests over the time spent
 * sending them) and p50/p95/p99 of the client's latency and of the response's
 * `x-gateway-overhead-ms` (time in the gateway before the answer; the model runs in the
 * background, so it is not in it, but the background runs share the process), then the (b)/(a)
 * ratios of p50 overhead and of throughput; then, less noisy on a shared machine, the process's
 * CPU per run and the app's SQL statements per run (request, execution, settlement, and the
 * batched request-log and evaluation writes that fall in a batch), both over the recorded batches
 * with their drains (client included; the drains' own queries not counted). After every batch, and so before closing, it waits
 * (bounded) until no run is queued or in progress and no reservation is held; then it closes both
 * apps as `server.ts` does. It asserts nothing; a hard deadline ends it if anything hangs.
 *
 * The database is a SQLite *file* in a temporary directory (removed at the end) by default, in WAL
 * mode as `npm start` runs it: enforcement adds writes (reservation, rate-limit counter, guardrail
 * evaluation, settlement), and their cost on a file is what a deployment pays; `:memory:` would
 * hide part of it. `BENCH_DATAPLANE_DB=memory` measures against `sqlite::memory:` instead.
 *
 * Environment (defaults finish in about half a minute on 2 cores): BENCH_DATAPLANE_REQUESTS (160
 * per configuration), BENCH_DATAPLANE_ROUNDS (8 batches each), BENCH_DATAPLANE_CONCURRENCY (4),
 * BENCH_DATAPLANE_WARMUP (40 per configuration, not measured), BENCH_DATAPLANE_DB (file | memory),
 * BENCH_DATAPLANE_DRAIN_MS (30000, per drain), BENCH_DATAPLANE_DEADLINE_MS (120000, the whole run).
 */
const REQUESTS = intEnv('BENCH_DATAPLANE_REQUESTS', 160);
const ROUNDS = Math.min(REQUESTS, intEnv('BENCH_DATAPLANE_ROUNDS', 8));
const CONCURRENCY = intEnv('BENCH_DATAPLANE_CONCURRENCY', 4);
const WARMUP = intEnv('BENCH_DATAPLANE_WARMUP', 40, 0);
const DRAIN_MS = intEnv('BENCH_DATAPLANE_DRAIN_MS', 30_000);
const DEADLINE_MS = intEnv('BENCH_DATAPLANE_DEADLINE_MS', 120_000);
const DB = process.env.BENCH_DATAPLANE_DB || 'file';
if (DB !== 'file' && DB !== 'memory') throw new Error(`BENCH_DATAPLANE_DB must be 'file' or 'memory', got '${DB}'.`);
const REQUEST_TIMEOUT_MS = 30_000;
const KEY = 'bench-bootstrap-key-0123456789';
const BETA = { 'OpenAI-Beta': 'assistants=v2' };
const DATA_PLANE = { 'x-gateway-api-key': KEY, 'x-gateway-virtual-key': 'local', ...BETA, 'content-type': 'application/json' };
const USER_TEXT = 'Summarise the open tickets of the northern region and suggest who should take the oldest one.';

/** Temporary database directories still in use (removed on close, or by the deadline). */
const tempDirs = new Set<string>();

// Stops on its own whatever happens: a hung drain or request cannot keep the process alive.
setTimeout(() => {
  console.error(`bench/dataplane: still running after ${DEADLINE_MS} ms; giving up.`);
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  process.exit(1);
}, DEADLINE_MS).unref();

interface Stats {
  p50: number;
  p95: number;
  p99: number;
}

interface Sample {
  status: number;
  latency: number;
  overhead: number | null;
  rateLimited: boolean;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), p99: quantile(sorted, 0.99) };
}

/** One running app on 127.0.0.1 with its own database. */
interface Gateway {
  app: App;
  /** Statements the app ran so far (the runtime's onQuery hook), the bench's own drain queries included. */
  statements: { count: number };
  base: string;
  admin(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<any>;
  close(): Promise<void>;
}

async function startGateway(): Promise<Gateway> {
  const dir = DB === 'file' ? mkdtempSync(join(tmpdir(), 'gatehouse-bench-')) : null;
  if (dir) tempDirs.add(dir);
  const statements = { count: 0 };
  const app = await createApp(
    configFrom({ DATABASE_URL: dir ? `sqlite:${join(dir, 'gatehouse.sqlite')}` : 'sqlite::memory:', LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: KEY }),
    { onQuery: () => statements.count++ },
  ).catch((error: unknown) => {
    if (dir) {
      rmSync(dir, { recursive: true, force: true });
      tempDirs.delete(dir);
    }
    throw error;
  });
  const server = createServer(app.yoga);
  const base = await listen(server);
  return {
    app,
    statements,
    base,
    async admin(method, path, body, headers = {}) {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { 'x-gateway-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    // As server.ts shuts down: stop accepting, end idle keep-alive sockets and streams, let
    // in-flight requests finish (bounded), then stop background work and close the database.
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      app.runtime.beginShutdown();
      const timer = setTimeout(() => server.closeAllConnections(), 5_000);
      await closed;
      clearTimeout(timer);
      await app.close();
      if (dir) {
        rmSync(dir, { recursive: true, force: true });
        tempDirs.delete(dir);
      }
    },
  };
}

async function query<T>(app: App, sql: string): Promise<T[]> {
  return app.runtime.fork().getConnection().execute<T[]>(sql, [], 'all');
}

/** Waits (at most DRAIN_MS) until no run is queued or in progress and no reservation is held. */
async function drain(app: App): Promise<{ ms: number; pending: number; held: number; queries: number }> {
  const started = performance.now();
  for (let queries = 2; ; queries += 2) {
    const [{ pending }] = await query<{ pending: number }>(app, "select count(*) as pending from runs where status in ('queued', 'in_progress')");
    const [{ held }] = await query<{ held: number | null }>(app, 'select coalesce(sum(reserved), 0) as held from usage_buckets');
    const ms = performance.now() - started;
    if ((Number(pending) === 0 && Number(held) === 0) || ms > DRAIN_MS) return { ms, pending: Number(pending), held: Number(held ?? 0), queries };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** `count` requests from CONCURRENCY workers; the time is wall-clock for all of them. */
async function send(base: string, assistantId: string, count: number): Promise<{ samples: Sample[]; seconds: number }> {
  const body = JSON.stringify({ assistant_id: assistantId, thread: { messages: [{ role: 'user', content: USER_TEXT }] } });
  const samples: Sample[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next++ < count) {
        const t0 = performance.now();
        const response = await fetch(`${base}/v1/threads/runs`, { method: 'POST', headers: DATA_PLANE, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        const text = await response.text();
        const latency = performance.now() - t0;
        if (response.status !== 200 && response.status !== 246) throw new Error(`POST /v1/threads/runs: HTTP ${response.status} ${text}`);
        const header = response.headers.get('x-gateway-overhead-ms');
        samples.push({ status: response.status, latency, overhead: header === null ? null : Number(header), rateLimited: response.headers.has('x-ratelimit-limit') });
      }
    }),
  );
  return { samples, seconds: (performance.now() - started) / 1000 };
}

/** One configuration under test: its own app and database, and what it measured so far. */
interface Subject {
  name: string;
  gateway: Gateway;
  assistantId: string;
  samples: Sample[];
  seconds: number;
  drainMs: number;
  /** Process CPU (user + system, ms) while its recorded batches were sent and drained. */
  cpuMs: number;
  /** The app's statements in its recorded batches, without the drains' own. */
  statements: number;
  notDrained: string[];
  /** Lines that show the configuration was in effect (read after the last drain). */
  describe: (samples: Sample[]) => Promise<string[]>;
}

async function subject(name: string, configure: (gateway: Gateway) => Promise<Subject['describe']>): Promise<Subject> {
  const gateway = await startGateway();
  try {
    const assistant = await gateway.admin('POST', '/v1/assistants', { model: 'local-test' }, BETA);
    const describe = await configure(gateway);
    return { name, gateway, assistantId: assistant.id, samples: [], seconds: 0, drainMs: 0, cpuMs: 0, statements: 0, notDrained: [], describe };
  } catch (error) {
    await gateway.close();
    throw error;
  }
}

async function batch(s: Subject, count: number, record: boolean): Promise<void> {
  const cpu = processCpuMs();
  const statements = s.gateway.statements.count;
  const { samples, seconds } = await send(s.gateway.base, s.assistantId, count);
  const drained = await drain(s.gateway.app);
  const used = processCpuMs() - cpu;
  if (drained.pending || drained.held) s.notDrained.push(`${drained.pending} runs pending, ${drained.held} tokens held after ${DRAIN_MS} ms`);
  if (!record) return;
  s.samples.push(...samples);
  s.seconds += seconds;
  s.drainMs += drained.ms;
  s.cpuMs += used;
  s.statements += s.gateway.statements.count - statements - drained.queries;
}

const subjects: Subject[] = [];
try {
  subjects.push(await subject('(a) no enforcement', async () => async () => []));
  subjects.push(
    await subject('(b) usage limit + rate limit + guardrail', async (gateway) => {
      const policy = await gateway.admin('POST', '/v1/policies/usage-limits', {
        name: 'Bench budget',
        conditions: [{ key: 'workspace_id', value: '*' }],
        group_by: [{ key: 'api_key' }],
        type: 'tokens',
        credit_limit: 1_000_000_000_000,
      });
      await gateway.admin('PUT', '/v1/integrations/local/workspaces', {
        workspaces: [{ id: 'default', enabled: true, rate_limits: [{ type: 'requests', unit: 'rpm', value: 1_000_000_000 }] }],
      });
      const guardrail = await gateway.admin('POST', '/v1/guardrails', {
        name: 'Bench word count',
        checks: [{ id: 'default.wordCount', parameters: { minWords: 1, maxWords: 10_000 } }],
        actions: { deny: false },
      });
      await gateway.admin('PUT', '/v1/providers/local', { input_guardrails: [guardrail.slug] });
      // What shows the checks ran: rate-limit headers, the policy's usage, the stored evaluations.
      return async (samples) => {
        const usage = (await gateway.admin('GET', `/v1/policies/usage-limits/${policy.id}`)).value_key_usage_map as Record<string, { current_usage: number }>;
        const tokens = Object.values(usage).reduce((sum, v) => sum + v.current_usage, 0);
        const [{ n }] = await query<{ n: number }>(gateway.app, "select count(*) as n from guardrail_evaluations where stage = 'input'");
        return [
          `in effect: ${samples.filter((s) => s.rateLimited).length}/${samples.length} responses with x-ratelimit-*, ${n} input-guardrail evaluations stored, ${tokens} tokens settled on the policy (warm-up included)`,
        ];
      };
    }),
  );
  const [a, b] = subjects;

  for (const s of subjects) if (WARMUP > 0) await batch(s, WARMUP, false);
  // Alternating batches (a b, b a, a b, …), each from an idle executor: drift (JIT, the machine,
  // a growing database) falls on both configurations alike instead of on the one measured last.
  for (let round = 0; round < ROUNDS; round++) {
    const count = Math.floor(REQUESTS / ROUNDS) + (round < REQUESTS % ROUNDS ? 1 : 0);
    for (const s of round % 2 === 0 ? [a, b] : [b, a]) await batch(s, count, true);
  }

  const ms = (s: Stats) => `p50 ${s.p50.toFixed(1)}  p95 ${s.p95.toFixed(1)}  p99 ${s.p99.toFixed(1)} ms`;
  console.log(
    `Data-plane overhead: POST /v1/threads/runs, ${REQUESTS} requests per configuration in ${ROUNDS} alternating batches (+${WARMUP} warm-up), concurrency ${CONCURRENCY}, ${DB === 'file' ? 'SQLite file (WAL)' : 'SQLite :memory:'}, local model in the background`,
  );
  const results = [];
  for (const s of subjects) {
    const overheads = s.samples.flatMap((x) => (x.overhead === null ? [] : [x.overhead]));
    const r = { rps: s.samples.length / s.seconds, latency: stats(s.samples.map((x) => x.latency)), overhead: stats(overheads) };
    results.push(r);
    const statuses = new Map<number, number>();
    for (const x of s.samples) statuses.set(x.status, (statuses.get(x.status) ?? 0) + 1);
    const missing = s.samples.length - overheads.length;
    console.log(`${s.name.padEnd(42)} ${r.rps.toFixed(1).padStart(6)} req/s   latency ${ms(r.latency)}   x-gateway-overhead-ms ${ms(r.overhead)}`);
    const runs = await query<{ status: string; n: number }>(s.gateway.app, 'select status, count(*) as n from runs group by status order by status');
    const notes = [
      `responses ${[...statuses].map(([status, n]) => `${n}×${status}`).join(' ')}${missing ? `, ${missing} without x-gateway-overhead-ms` : ''}; runs ${runs.map((x) => `${x.n} ${x.status}`).join(', ')} (drains ${(s.drainMs / 1000).toFixed(1)} s)`,
      ...s.notDrained.map((x) => `NOT drained: ${x}`),
      ...(await s.describe(s.samples)),
    ];
    for (const note of notes) console.log(`${''.padEnd(45)}${note}`);
  }
  console.log(`(b) / (a) p50 overhead ratio: ${(results[1].overhead.p50 / results[0].overhead.p50).toFixed(2)}×   throughput ratio: ${(results[1].rps / results[0].rps).toFixed(2)}×`);
  // Less noisy than latency on a shared machine: the process's CPU per run, each created, executed
  // and settled (client included, the same for both; the drains' polling too).
  const cpu = subjects.map((s) => s.cpuMs / s.samples.length);
  console.log(`CPU per run (client, server, drain): (a) ${cpu[0].toFixed(2)} ms   (b) ${cpu[1].toFixed(2)} ms   (b) − (a) ${(cpu[1] - cpu[0]).toFixed(2)} ms   (b) / (a) ${(cpu[1] / cpu[0]).toFixed(2)}×`);
  const sql = subjects.map((s) => (s.statements / s.samples.length).toFixed(1));
  console.log(`SQL statements per run (request, execution, settlement; transaction control included): (a) ${sql[0]}   (b) ${sql[1]}`);
} finally {
  for (const s of subjects) await s.gateway.close();
}
