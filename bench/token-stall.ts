import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createApp } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { createHttpServer } from '../src/http/http-server.js';
import { countTokensAsync } from '../src/modules/runs/models/tokens.js';
import { mainThreadCpuMs } from './lib.js';

/**
 * `npm run bench` (part): does a run on huge messages hold the event loop? A run on the `local`
 * model is created on a thread of 1 MB of user text (messages of the largest allowed size, 256,000
 * characters; once without spaces, the tokenizer's worst case, once ordinary text) while `/healthz`
 * is probed every 5 ms on its own connection, from the request until the run has ended. Prints the
 * slowest probe beside the goal: under 50 ms. A probe's latency also counts the time other processes
 * of a loaded machine held the core, so on Linux the bench prints as well the longest stretch of
 * main-thread CPU time between two turns of the event loop (from the thread's schedstat), which
 * does not depend on the load.
 */
const KEY = 'bench-bootstrap-key-0123456789';
const SIZE = Number(process.env.BENCH_MESSAGE_CHARS ?? 1_000_000);
const MESSAGE_MAX = 256_000;
// The local model echoes the last message: capped, so the stream of deltas is not what is measured.
const MAX_COMPLETION = Number(process.env.BENCH_MAX_COMPLETION ?? 256);
const GOAL_MS = 50;
const HEADERS = { 'x-gateway-api-key': KEY, 'x-gateway-virtual-key': 'local', 'OpenAI-Beta': 'assistants=v2', 'content-type': 'application/json' };

const config = configFrom({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: KEY, BODY_LIMIT_BYTES: 4 * 1024 * 1024 });
const app = await createApp(config);
const { server, drain } = createHttpServer(app.yoga, config);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

async function post(path: string, body: unknown): Promise<any> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  const json = await response.json();
  if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** The longest main-thread CPU time between two turns of the event loop while `done` is pending, in ms. */
async function longestSlice(done: Promise<unknown>): Promise<number | null> {
  if (!mainThreadCpuMs) return null;
  let finished = false;
  void done.finally(() => (finished = true));
  let longest = 0;
  let last = mainThreadCpuMs();
  while (!finished) {
    await new Promise((r) => setImmediate(r));
    const now = mainThreadCpuMs();
    longest = Math.max(longest, now - last);
    last = now;
  }
  return longest;
}

/** Probes /healthz until `done` settles; returns the probe latencies in ms. */
async function probe(done: Promise<unknown>): Promise<number[]> {
  let finished = false;
  void done.finally(() => (finished = true));
  const latencies: number[] = [];
  while (!finished) {
    const t0 = performance.now();
    await (await fetch(`${base}/healthz`)).arrayBuffer();
    latencies.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 5));
  }
  return latencies;
}

async function runOn(text: string): Promise<{ status: string; ms: number }> {
  const t0 = performance.now();
  const messages = [];
  for (let at = 0; at < text.length; at += MESSAGE_MAX) messages.push({ role: 'user', content: text.slice(at, at + MESSAGE_MAX) });
  const run = await post('/v1/threads/runs', { assistant_id: assistantId, thread: { messages }, max_completion_tokens: MAX_COMPLETION });
  for (;;) {
    const current = await (await fetch(`${base}/v1/threads/${run.thread_id}/runs/${run.id}`, { headers: HEADERS })).json();
    if (!['queued', 'in_progress'].includes(current.status)) return { status: current.status, ms: performance.now() - t0 };
    await new Promise((r) => setTimeout(r, 20));
  }
}

function report(what: string, latencies: number[]): string {
  latencies.sort((a, b) => a - b);
  const worst = latencies.at(-1) ?? 0;
  return `${what}: ${latencies.length} probes, p50 ${latencies[Math.floor(latencies.length / 2)].toFixed(1)} ms, slowest ${worst.toFixed(1)} ms`;
}

const assistantId = (await post('/v1/assistants', { model: 'local-test' })).id;
// Warm-up of the same shape (an answer cut by the limit), so no code is loaded for the first time while measured.
await probe(runOn('warm up '.repeat(1_000)));
// The same probes with nothing else to do: the floor set by the machine (shared cores, the client in this process).
const idleDelay = monitorEventLoopDelay({ resolution: 1 });
idleDelay.enable();
const idle = await probe(new Promise((r) => setTimeout(r, 1_000)));
idleDelay.disable();
console.log(`${report('/healthz while idle for 1 s', idle)}; event-loop delay max ${(idleDelay.max / 1e6).toFixed(1)} ms`);
const word = 'lorem ipsum dolor sit amet, consectetur adipiscing elit; ';
for (const [name, text] of [
  ['without spaces', 'x'.repeat(SIZE)],
  ['ordinary text', word.repeat(Math.ceil(SIZE / word.length)).slice(0, SIZE)],
] as const) {
  // Token counting alone, without the HTTP and database work of a run: the event loop's worst delay.
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const t0 = performance.now();
  const tokens = await countTokensAsync(text);
  const countMs = performance.now() - t0;
  delay.disable();
  console.log(`counting 1 MB ${name} alone: ${tokens} tokens in ${countMs.toFixed(0)} ms; event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms = ${(delay.max / 1e6 / GOAL_MS).toFixed(2)}× the goal`);
  const done = runOn(text);
  const [latencies, slice, run] = await Promise.all([probe(done), longestSlice(done), done]);
  const worst = Math.max(...latencies);
  console.log(`run on a thread of ${(SIZE / 1e6).toFixed(1)} MB ${name}: ${run.status} in ${run.ms.toFixed(0)} ms; ${report('/healthz during it', latencies)} = ${(worst / GOAL_MS).toFixed(2)}× the goal (< ${GOAL_MS} ms)`);
  if (slice !== null) console.log(`  longest main-thread CPU between two event-loop turns (client included): ${slice.toFixed(1)} ms = ${(slice / GOAL_MS).toFixed(2)}× the goal`);
}
await drain();
await app.close();
