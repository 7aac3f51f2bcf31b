import { Agent, createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createApp } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { runEventsTopic } from '../src/modules/runs/event-log.js';
import { LocalModel } from '../src/modules/runs/models/local-model.js';
import type { ModelAdapter, ModelRequest } from '../src/modules/runs/models/model.js';
import { modelRegistry } from '../src/modules/runs/models/registry.js';
import { goalLine as line, intEnv, quantile, tempDatabase } from './lib.js';

/**
 * `npm run bench` (fan-out): SUBSCRIBERS clients following one run's events over real HTTP on
 * 127.0.0.1, beside the goals of the data-path issue. The run is held until every client is
 * connected, then emits ~200 text deltas (the offline `local` model, DELTA_MS apart). Done twice:
 * REST `GET /v1/threads/{id}/runs/{id}/events`, then the GraphQL `runEvents` subscription over
 * graphql-sse (/graphql/stream, one connection per subscription).
 *
 * - Delivery: for each event a client receives, the time from its publication (the pubsub's
 *   publish, stamped in this process) to the moment the client has the bytes; p50/p99 over all.
 * - Memory per idle stream: heap + external + array buffers after a full GC with every client
 *   connected to the held run, minus the same before; divided by the number of streams. Client
 *   and server share the process (as in the other benches), so this counts both ends of each
 *   connection: an upper bound of what the server holds.
 *
 * Environment: BENCH_FANOUT_SUBSCRIBERS (1000), BENCH_FANOUT_DELTA_MS (10).
 */
const SUBSCRIBERS = intEnv('BENCH_FANOUT_SUBSCRIBERS', 1000);
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
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });

// Publication time of each event of the followed run, by sequence.
const published = new Map<number, number>();
let followed = '';
const publish = app.runtime.pubsub.publish.bind(app.runtime.pubsub);
app.runtime.pubsub.publish = (topic, payload) => {
  if (topic === followed) published.set((payload as { sequence: number }).sequence, performance.now());
  publish(topic, payload);
};

const memory = () => {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};

interface Follower {
  /** Resolves once the response headers are in. */
  connected: Promise<void>;
  /** Resolves when the stream ends, with the delivery delay (ms) of each event seen. */
  done: Promise<number[]>;
}

/** One SSE client; `sequenceOf` finds an event's sequence in its frame. */
function follow(path: string, method: 'GET' | 'POST', body: string | undefined, sequenceOf: RegExp, end: RegExp): Follower {
  let onConnected!: () => void;
  let onFailed!: (error: Error) => void;
  const connected = new Promise<void>((resolve, reject) => ((onConnected = resolve), (onFailed = reject)));
  const done = new Promise<number[]>((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, agent, headers: { ...HEADERS, accept: 'text/event-stream' } }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        const error = new Error(`${method} ${path}: HTTP ${res.statusCode}`);
        onFailed(error);
        return reject(error);
      }
      onConnected();
      const delays: number[] = [];
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = performance.now();
        pending += chunk;
        const frames = pending.split('\n\n');
        pending = frames.pop()!;
        for (const frame of frames) {
          const match = sequenceOf.exec(frame);
          const at = match ? published.get(Number(match[1])) : undefined;
          if (at !== undefined) delays.push(now - at);
          if (end.test(frame)) req.destroy();
        }
      });
      res.on('close', () => resolve(delays));
      res.on('error', () => resolve(delays));
    });
    req.on('error', (error) => {
      onFailed(error);
      reject(error);
    });
    req.end(body);
  });
  return { connected, done };
}

async function json(method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, { method, headers: HEADERS, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status !== 200) throw new Error(`${method} ${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

/** One held run followed by SUBSCRIBERS clients: delivery delays and memory per idle stream. */
async function measure(open: (threadId: string, runId: string) => Follower) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  modelRegistry(app.runtime).set('local', () => new HeldModel(gate));
  const assistant = await json('POST', '/v1/assistants', { model: 'local-test' });
  const thread = await json('POST', '/v1/threads', { messages: [{ role: 'user', content: TEXT }] });
  const run = await json('POST', `/v1/threads/${thread.id}/runs`, { assistant_id: assistant.id });
  followed = runEventsTopic(run.id);
  published.clear();

  const before = memory();
  const followers: Follower[] = [];
  // Connect in batches so the listen backlog is never the limit.
  for (let i = 0; i < SUBSCRIBERS; i += 100) {
    const batch = Array.from({ length: Math.min(100, SUBSCRIBERS - i) }, () => open(thread.id, run.id));
    followers.push(...batch);
    await Promise.all(batch.map((f) => f.connected));
  }
  // Let the replays of the (few) events logged so far settle, then weigh the idle streams.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const perStream = (memory() - before) / SUBSCRIBERS;
  release();
  const delays = (await Promise.all(followers.map((f) => f.done))).flat().sort((a, b) => a - b);
  return { events: published.size, delivered: delays.length, p50: quantile(delays, 0.5), p99: quantile(delays, 0.99), perStream };
}

const report = (name: string, r: Awaited<ReturnType<typeof measure>>) => {
  console.log(`${name}: ${SUBSCRIBERS} subscribers, ${r.events} events published (deltas ${DELTA_MS} ms apart), ${r.delivered} deliveries timed`);
  line('  delivery p50', `${r.p50.toFixed(1)} ms`, '≤ 100 ms', r.p50 / 100);
  line('  delivery p99', `${r.p99.toFixed(1)} ms`, '≤ 100 ms', r.p99 / 100);
  line('  memory per idle stream (client + server)', `${(r.perStream / 1024).toFixed(1)} KB`, '≤ 64 KB', r.perStream / 1024 / 64);
};

try {
  console.log('Fan-out: one run followed by many clients over HTTP on 127.0.0.1, SQLite file (WAL)');
  const rest = await measure((threadId, runId) => follow(`/v1/threads/${threadId}/runs/${runId}/events`, 'GET', undefined, /^id: (\d+)$/m, /^data: \[DONE\]$/m));
  report('REST /events', rest);
  const query = 'subscription($t: String!, $r: String!) { runEvents(threadId: $t, runId: $r) { sequence event data } }';
  const graphql = await measure((threadId, runId) =>
    follow('/graphql/stream', 'POST', JSON.stringify({ query, variables: { t: threadId, r: runId } }), /"sequence":(\d+)/, /^event: complete$/m),
  );
  report('GraphQL runEvents (graphql-sse)', graphql);
} finally {
  agent.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await app.close();
  database.remove();
}
