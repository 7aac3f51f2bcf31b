import { fork, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The helpers every bench shares: its BENCH_* settings, its percentiles and its goal lines. */

/** An integer BENCH_* setting (≥ `min`), or `fallback` when unset; anything else stops the bench. */
export function intEnv(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}, got '${raw}'.`);
  return value;
}

/** The q-quantile (0..1) of ascending `sorted` values; NaN when there are none. */
export const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

/**
 * The node options Gatehouse is deployed with (package.json `start`/`start:prod`, the Dockerfile),
 * for the benches' Gatehouse processes: a young generation of 64 MB semi-spaces (README,
 * "Production build and deployment").
 */
export const GATEHOUSE_NODE_ARGS = ['--max-semi-space-size=64'];

/**
 * How the benches' Gatehouse processes run: the production build (dist/, `npm run build`) on plain
 * node with NODE_ENV=production, as the Dockerfile runs it, built anew once per bench process so
 * it is always the tree's code. The sources through tsx (`npm start`) cost more CPU than a
 * deployment pays: tsx keeps function names by calling a `__name` helper on every closure made
 * (each request makes hundreds), and graphql-js checks its types the slower way unless NODE_ENV is
 * production. BENCH_SOURCES=1 runs the sources through tsx instead.
 */
export function gatehouseBuild(): { env: NodeJS.ProcessEnv; server: string[] } {
  if (process.env.BENCH_SOURCES === '1') return { env: {}, server: ['--import', 'tsx', 'src/server.ts'] };
  if (!built) {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
    built = true;
  }
  return { env: { NODE_ENV: 'production', GATEHOUSE_BUILD: 'dist' }, server: ['dist/server.js'] };
}
let built = false;

/**
 * A bench's child process answering questions over IPC (bench/chat-gateway.ts, bench/chat-proxy.ts,
 * bench/run-floor.ts): forked through tsx with `args`, it sends `{ ready: <base URL> }` once it
 * listens, then answers each `{ id, op }` with `{ id, ... }`. Its base URL, `ask` to put a
 * question, `stop` to end it (it is also ended if the bench exits first; the bench stops if it
 * exits before `stop`).
 */
export async function startIpcChild(script: URL, args: string[], execArgv: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const child = fork(script, args, { execArgv: ['--import', 'tsx', ...execArgv], env: { ...process.env, ...env } });
  let stopping = false;
  child.once('exit', (code) => {
    if (stopping) return;
    console.error(`${script.pathname} exited (${code}) before the bench ended`);
    process.exit(1);
  });
  process.on('exit', () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  });
  const waiting = new Map<number, (answer: any) => void>();
  let questions = 0;
  const ask = (op: 'cpu' | 'count' | 'counted' | 'profile' | 'profiled' | 'stop', extra: Record<string, string> = {}): Promise<any> =>
    new Promise((resolve) => {
      const id = ++questions;
      waiting.set(id, resolve);
      child.send({ id, op, ...extra });
    });
  const base = await new Promise<string>((resolve) =>
    child.on('message', (message: any) => {
      if (message.ready) resolve(message.ready);
      else {
        waiting.get(message.id)?.(message);
        waiting.delete(message.id);
      }
    }),
  );
  const stop = () =>
    new Promise((resolve) => {
      stopping = true;
      child.once('exit', resolve);
      child.send({ id: 0, op: 'stop' });
    });
  return { base, ask, stop, pid: child.pid };
}

/** Starts `server` on 127.0.0.1 on a free port; its base URL. */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * The child's side of startIpcChild for a bare server (bench/chat-proxy.ts, bench/run-floor.ts):
 * starts `server` (listen), sends `{ ready: <base URL> }`, then answers `cpu` with its CPU so far
 * in ms (`cpu`: processCpuMs, `main`: mainThreadCpuMs) and `stop` by closing the server, calling
 * `close` and exiting.
 */
export async function serveIpcChild(server: Server, close: () => void = () => {}): Promise<void> {
  const url = await listen(server);
  process.on('message', ({ id, op }: { id: number; op: 'cpu' | 'stop' }) => {
    if (op === 'cpu') process.send!({ id, cpu: processCpuMs(), main: mainThreadCpuMs?.() ?? NaN });
    else if (op === 'stop') {
      server.closeAllConnections();
      server.close();
      close();
      process.exit(0);
    }
  });
  process.send!({ ready: url });
}

/** One measured value beside an upper-bound goal: `ratio` is value / goal, met when ≤ 1. */
export const goalLine = (what: string, value: string, goal: string, ratio: number) =>
  console.log(`${what.padEnd(48)} ${value.padStart(14)}   goal ${goal.padEnd(10)} ${ratio.toFixed(2)}× the goal ${ratio <= 1 ? '(met)' : '(not met)'}`);

/**
 * A SQLite file (WAL, as `npm start` runs it) in a new temporary directory, and a deadline that
 * ends the bench if it is still running after `seconds`. `remove()` when done; a bench that ends
 * before (the deadline, a child that exits early, an error) removes it as it exits.
 */
export function tempDatabase(bench: string, seconds: number): { url: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-bench-${bench}-`));
  const remove = () => {
    clearTimeout(deadline);
    process.off('exit', remove);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = setTimeout(() => {
    console.error(`bench/${bench}: still running after ${seconds} s; giving up.`);
    process.exit(1);
  }, seconds * 1000).unref();
  process.on('exit', remove);
  return { url: `sqlite:${join(dir, 'gatehouse.sqlite')}`, remove };
}

/** `count` calls of `call`, from `concurrency` workers each starting the next as soon as its last one ends. */
export async function inParallel(concurrency: number, count: number, call: () => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) await call();
    }),
  );
}

/** `handler`, calling `onEnd` as each answer is ended (what ran before it ran inside the request). */
export function notingAnswers(handler: RequestListener, onEnd: () => void): RequestListener {
  return (req, res) => {
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.end = ((...args: unknown[]) => {
      onEnd();
      return end(...args);
    }) as typeof res.end;
    return handler(req, res);
  };
}

/** A server for `handler` that calls `onEnd` as each answer is ended. */
export const serverNotingAnswers = (handler: RequestListener, onEnd: () => void): Server => createServer(notingAnswers(handler, onEnd));

/** This process's CPU time so far in ms (user + system, every thread: process.cpuUsage()). */
export function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
/**
 * The main thread's CPU time so far in ms, from the kernel's schedstat (Linux), or null where there
 * is none. Unlike wall time it does not grow when other processes hold the core, and unlike
 * process.cpuUsage() it leaves out worker threads (a bench's client) and the GC's helper threads.
 */
export const mainThreadCpuMs: (() => number) | null = existsSync(SCHEDSTAT)
  ? () => Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]) / 1e6
  : null;
