import { Worker } from 'node:worker_threads';
import { mainThreadCpuMs, processCpuMs, quantile } from './lib.js';

/**
 * Targets measured in turn from a client in a worker thread, for the benches that compare reads
 * served by this process (bench/run.ts, bench/rest-read.ts). The main thread then holds only the
 * servers: its CPU time per request (Linux: the thread's schedstat) is the servers' own cost and
 * does not depend on the machine's load; throughput is printed beside it. Each target gets its own
 * warm-up, then ROUNDS shares of its requests alternate with the others', so a change in the
 * machine's load (or the process's warming up) meets all of them alike.
 */
export interface Target {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

export interface Measured {
  name: string;
  target: Target;
  requests: number;
}

export interface Result {
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  cpuPerRequest: number;
}

/** The servers' CPU time in ms: the main thread's (Linux), else the whole process's (the client's included). */
const serverCpuMs = mainThreadCpuMs ?? processCpuMs;

// The load generator: `requests` calls from `concurrency` loops, each latency in ms. Plain
// JavaScript run as a worker, so it needs no TypeScript loader.
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { target, requests, concurrency } = workerData;
(async () => {
  const latencies = [];
  let next = 0;
  let failure = null;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < requests && !failure) {
      const t0 = performance.now();
      const response = await fetch(target.url, { method: target.method, headers: target.headers, body: target.body });
      await response.arrayBuffer();
      if (response.status !== 200) failure = 'HTTP ' + response.status;
      latencies.push(performance.now() - t0);
    }
  }));
  parentPort.postMessage({ latencies, failure });
})();
`;

function load(target: Target, requests: number, concurrency: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(CLIENT, { eval: true, workerData: { target, requests, concurrency } });
    worker.once('message', ({ latencies, failure }: { latencies: number[]; failure: string | null }) => {
      void worker.terminate();
      if (failure) reject(new Error(`${target.method} ${target.url}: ${failure}`));
      else resolve(latencies);
    });
    worker.once('error', reject);
  });
}

/** Measures the targets in turn (see above) and prints one line per target. */
export async function measureInTurn(targets: Measured[], options: { rounds: number; concurrency: number; warmUp?: number }): Promise<Result[]> {
  const measured = targets.map((t) => ({ ...t, seconds: 0, cpuMs: 0, latencies: [] as number[] }));
  for (const m of measured) await load(m.target, Math.min(options.warmUp ?? 200, m.requests), options.concurrency);
  for (let round = 0; round < options.rounds; round++) {
    for (const m of measured) {
      const share = Math.ceil(m.requests / options.rounds);
      const cpu0 = serverCpuMs();
      const t0 = performance.now();
      m.latencies.push(...(await load(m.target, share, options.concurrency)));
      m.seconds += (performance.now() - t0) / 1000;
      m.cpuMs += serverCpuMs() - cpu0;
    }
  }
  return measured.map((m) => {
    m.latencies.sort((a, b) => a - b);
    const q = (x: number) => quantile(m.latencies, x);
    const result = { rps: m.latencies.length / m.seconds, p50: q(0.5), p95: q(0.95), p99: q(0.99), cpuPerRequest: m.cpuMs / m.latencies.length };
    console.log(`${m.name.padEnd(48)} ${result.rps.toFixed(0).padStart(6)} req/s   p50 ${result.p50.toFixed(2)} ms   server CPU ${result.cpuPerRequest.toFixed(3)} ms/request`);
    return result;
  });
}
