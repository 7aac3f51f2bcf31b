import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { createApp } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { runEventsTopic } from '../src/modules/runs/event-log.js';
import { LocalModel } from '../src/modules/runs/models/local-model.js';
import type { ModelAdapter, ModelRequest } from '../src/modules/runs/models/model.js';
import { modelRegistry } from '../src/modules/runs/models/registry.js';
import type { ClientsReport, OpenMessage } from './fanout-clients.js';
import { goalLine as line, intEnv, mainThreadCpuMs, quantile, tempDatabase } from './lib.js';

/**
 * `npm run bench` (fan-out): SUBSCRIBERS clients following one run's events over real HTTP on
 * 127.0.0.1, beside the goals of the data-path issue. The run is held until every client is
 * connected, then emits ~200 text deltas (the offline `local` model, DELTA_MS apart). Done twice:
 * REST `GET /v1/threads/{id}/runs/{id}/events`, then the GraphQL `runEvents` subscription over
 * graphql-sse (/graphql/stream, one connection per subscription).
 *
 * The clients live in a worker thread (bench/fanout-clients.ts), not on the server's thread: a
 * thousand clients parsing a thousand streams cost about as much as the server writing them, and
 * on one event loop the server's delivery time counted the clients' work too (the first version
 * of this bench did so). They still share the machine, as clients on 127.0.0.1 would, so
 * they are written to cost little: each stream is a raw `net` socket with a hand-written HTTP/1.1
 * request, and each socket read is stamped once for every event it carries, de-chunked and
 * scanned as bytes for frame ends and sequences (no node:http parser, no strings per frame).
 * With node:http and a string split per read the clients cost about as much CPU as the server
 * and their loop ran 66–158 ms late at p99, which the delivery times counted.
 *
 * - Delivery: for each event a client receives, the time from its publication (the pubsub's
 *   publish, stamped on the server's thread) to the moment the client has the bytes, both read
 *   as performance.timeOrigin + now() (one clock for both threads); p50/p99 over all events
 *   published after the release. The run's first events are published before it, while the
 *   clients connect: each client gets them as a replay from the log, seconds after they were
 *   published, which times the connections (1,000 of ~211,000 deliveries, half of the top 1%).
 * - Server CPU per delivery (Linux): the server thread's CPU time (schedstat) from the run's
 *   release until every client has ended, divided by the deliveries timed; load-independent.
 * - Client worker CPU and event-loop delay: the clients share the 2 cores with the server, and
 *   they stamp an event when their loop reaches its bytes; a client loop running late (its p99
 *   delay) adds that much to the delivery times although the server had written the bytes.
 * - Memory per idle stream: the server thread's heap + external memory after a full GC with
 *   every client connected to the held run, minus the same before; divided by the number of
 *   streams (the clients' memory is the worker's, not counted).
 *
 * Environment: BENCH_FANOUT_SUBSCRIBERS (1000), BENCH_FANOUT_DELTA_MS (10), BENCH_FANOUT_ONLY
 * (`rest` or `graphql`: that transport alone), BENCH_FANOUT_FIRST (`rest`, the default, or
 * `graphql`: which transport is measured first), BENCH_FANOUT_PROFILE=<dir> (a CPU profile of the
 * server thread from each run's release to its last client's end, written there as
 * fanout-<transport>.cpuprofile).
 */
const SUBSCRIBERS = intEnv('BENCH_FANOUT_SUBSCRIBERS', 1000);
const ONLY = process.env.BENCH_FANOUT_ONLY ?? '';
if (!['', 'rest', 'graphql'].includes(ONLY)) throw new Error(`BENCH_FANOUT_ONLY must be rest or graphql, got '${ONLY}'.`);
const PROFILE = process.env.BENCH_FANOUT_PROFILE;
const FIRST = process.env.BENCH_FANOUT_FIRST ?? 'rest';
if (!['rest', 'graphql'].includes(FIRST)) throw new Error(`BENCH_FANOUT_FIRST must be rest or graphql, got '${FIRST}'.`);
const DELTA_MS = intEnv('BENCH_FANOUT_DELTA_MS', 10);
const KEY = 'bench-bootstrap-key-0123456789';
const BETA = { 'OpenAI-Beta': 'assistants=v2' };
const HEADERS = { 'x-gateway-api-key': KEY, 'x-gateway-virtual-key': 'local', ...BETA, 'content-type': 'application/json' };
// ~200 deltas at one token each: "You said: " and 100 short words with their spaces.
const TEXT = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const database = tempDatabase('fanout', 180);

/** The local model, held until `release()`: clients connect to a run that has not started yet. */
class HeldModel implements ModelAdapter {
  private readonly inner = new LocalModel({ delayMs: DELTA_MS, tokensPerDelta: 1 });
  constructor(private readonly gate: Promise<void>) {}
  async *stream(req: ModelRequest) {
    await this.gate;
    yield* this.inner.stream(req);
  }
}

const app = await createApp(
  configFrom({ DATABASE_URL: database.url, LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: KEY, SSE_KEEPALIVE_MS: 600_000 }),
);
const server = createServer((req, res) => app.yoga(req, res));
server.maxConnections = SUBSCRIBERS + 100;
await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: SUBSCRIBERS + 100 }, resolve));
const { port } = server.address() as AddressInfo;
const base = `http://127.0.0.1:${port}`;
// A worker does not inherit tsx's loader: it registers it before loading the TypeScript clients.
const clientsUrl = new URL('./fanout-clients.ts', import.meta.url).href;
const clients = new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(clientsUrl)}); });`, { eval: true });
clients.unref();
const clientsFailed = new Promise<never>((_, reject) => clients.once('error', reject));
clientsFailed.catch(() => {});
const clock = () => performance.timeOrigin + performance.now();

// Publication time of each event of the followed run, by sequence.
const published = new Map<number, number>();
let followed = '';
const publish = app.runtime.pubsub.publish.bind(app.runtime.pubsub);
app.runtime.pubsub.publish = (topic, payload) => {
  if (topic === followed) published.set((payload as { sequence: number }).sequence, clock());
  publish(topic, payload);
};

const memory = () => {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};

async function json(method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, { method, headers: HEADERS, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status !== 200) throw new Error(`${method} ${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

/** What `open` tells the clients to follow for one held run. */
type Streams = (threadId: string, runId: string) => Omit<OpenMessage, 'count'>;

/** The server thread's CPU profile from `start()` to the returned `stop()` (when BENCH_FANOUT_PROFILE is set). */
async function profiler(name: string): Promise<() => Promise<void>> {
  if (!PROFILE) return async () => {};
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(PROFILE, { recursive: true });
    writeFileSync(join(PROFILE, `fanout-${name}.cpuprofile`), JSON.stringify(profile));
  };
}

/** One held run followed by SUBSCRIBERS clients: delivery delays and memory per idle stream. */
async function measure(name: string, streams: Streams) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  modelRegistry(app.runtime).set('local', () => new HeldModel(gate));
  const assistant = await json('POST', '/v1/assistants', { model: 'local-test' });
  const thread = await json('POST', '/v1/threads', { messages: [{ role: 'user', content: TEXT }] });
  const run = await json('POST', `/v1/threads/${thread.id}/runs`, { assistant_id: assistant.id });
  followed = runEventsTopic(run.id);
  published.clear();

  const before = memory();
  clients.postMessage({ count: SUBSCRIBERS, ...streams(thread.id, run.id) } satisfies OpenMessage);
  await Promise.race([once(clients, 'message'), clientsFailed]);
  // Let the replays of the (few) events logged so far settle, then weigh the idle streams.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const perStream = (memory() - before) / SUBSCRIBERS;
  const stopProfile = await profiler(name);
  const cpuBefore = mainThreadCpuMs?.() ?? null;
  const releasedAt = clock();
  release();
  const released = performance.now();
  const [{ sequences, times, cpu: clientCpu, loopDelay }] = (await Promise.race([once(clients, 'message'), clientsFailed])) as [ClientsReport];
  const cpuAfter = mainThreadCpuMs?.() ?? null;
  await stopProfile();
  // Events published before the release (the run's first ones) reached the clients as replays
  // from the log when they connected: their delay is the connection's, not a delivery's.
  let replayed = 0;
  for (const at of published.values()) if (at < releasedAt) replayed++;
  const delays: number[] = [];
  for (let i = 0; i < sequences.length; i++) {
    const at = published.get(sequences[i]);
    if (at !== undefined && at >= releasedAt) delays.push(times[i] - at);
  }
  delays.sort((a, b) => a - b);
  const cpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
  const wall = performance.now() - released;
  const events = published.size - replayed;
  return { events, replayed, delivered: delays.length, p50: quantile(delays, 0.5), p99: quantile(delays, 0.99), perStream, cpu, clientCpu, loopDelay, wall };
}

const report = (name: string, r: Awaited<ReturnType<typeof measure>>) => {
  console.log(
    `${name}: ${SUBSCRIBERS} subscribers, ${r.events} events published after the release (deltas ${DELTA_MS} ms apart; ${r.replayed} before it, replayed at connection, not timed), ${r.delivered} deliveries timed`,
  );
  line('  delivery p50', `${r.p50.toFixed(1)} ms`, '≤ 100 ms', r.p50 / 100);
  line('  delivery p99', `${r.p99.toFixed(1)} ms`, '≤ 100 ms', r.p99 / 100);
  // The server thread's own CPU (schedstat), from the run's release to the last client's end:
  // unlike delivery times, it does not count the time other processes held the cores.
  if (r.cpu !== null) console.log(`  server thread CPU per event delivered to one client    ${((r.cpu * 1000) / r.delivered).toFixed(1)} µs (${r.cpu.toFixed(0)} ms in all, over ${r.wall.toFixed(0)} ms)`);
  // The clients share the 2 cores: their CPU is what the server could not use.
  if (r.clientCpu !== null) console.log(`  client worker CPU per event received                  ${((r.clientCpu * 1000) / r.delivered).toFixed(1)} µs (${r.clientCpu.toFixed(0)} ms in all)`);
  // Counted in the delivery times: how late the clients' own loop ran (they stamp on arrival).
  console.log(`  client worker event-loop delay p50 / p99              ${r.loopDelay[0].toFixed(1)} / ${r.loopDelay[1].toFixed(1)} ms`);
  line('  memory per idle stream (server)', `${(r.perStream / 1024).toFixed(1)} KB`, '≤ 64 KB', r.perStream / 1024 / 64);
};

const TRANSPORTS: Record<'rest' | 'graphql', { title: string; streams: Streams }> = {
  rest: {
    title: 'REST /events',
    streams: (threadId, runId) => ({
      url: `${base}/v1/threads/${threadId}/runs/${runId}/events`,
      method: 'GET',
      headers: HEADERS,
      sequenceAfter: 'id: ',
      sequenceAtLineStart: true,
      end: 'data: [DONE]',
    }),
  },
  graphql: {
    title: 'GraphQL runEvents (graphql-sse)',
    streams: (threadId, runId) => ({
      url: `${base}/graphql/stream`,
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({
        query: 'subscription($t: String!, $r: String!) { runEvents(threadId: $t, runId: $r) { sequence event data } }',
        variables: { t: threadId, r: runId },
      }),
      sequenceAfter: '"sequence":',
      sequenceAtLineStart: false,
      end: 'event: complete',
    }),
  },
};

try {
  console.log('Fan-out: one run followed by many clients over HTTP on 127.0.0.1, SQLite file (WAL)');
  const order = (FIRST === 'graphql' ? ['graphql', 'rest'] : ['rest', 'graphql']) as ('rest' | 'graphql')[];
  for (const name of order.filter((each) => ONLY === '' || each === ONLY)) {
    const { title, streams } = TRANSPORTS[name];
    report(title, await measure(name, streams));
  }
} finally {
  await clients.terminate();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await app.close();
  database.remove();
}
