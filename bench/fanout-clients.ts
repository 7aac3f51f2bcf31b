/**
 * The clients of bench/fanout.ts, in a worker thread of their own (see that file's header for
 * why). Told to open SUBSCRIBERS streams, it opens them in batches of 100, says `connected`, and
 * when every stream has ended sends back, for each event frame received, its sequence and the
 * time it arrived (performance.timeOrigin + now(), comparable across threads).
 */
import { existsSync, readFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';

export interface OpenMessage {
  count: number;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Finds an event's sequence in its frame (group 1). */
  sequenceOf: string;
  /** Matches the frame after which the client hangs up. */
  end: string;
}

export interface ClientsReport {
  sequences: Int32Array;
  times: Float64Array;
  /** This worker thread's CPU in ms (schedstat) from `connected` to the last stream's end; null off Linux. */
  cpu: number | null;
  /**
   * How late this thread's event loop ran (p50, p99, ms) over the same span: a client busy
   * with earlier bytes stamps later ones late, and that lateness counts as delivery time.
   */
  loopDelay: [number, number];
}

/** This thread's CPU time so far in ms (Linux), or null. */
const threadCpuMs = existsSync('/proc/thread-self/schedstat') ? () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6 : () => null;

const port = parentPort!;
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const clock = () => performance.timeOrigin + performance.now();

port.on('message', async (open: OpenMessage) => {
  const sequences: number[] = [];
  const times: number[] = [];
  const sequenceOf = new RegExp(open.sequenceOf, 'm');
  const end = new RegExp(open.end, 'm');

  /** One SSE client: `connected` once the headers are in, `done` when the stream ends. */
  const follow = () => {
    let onConnected!: () => void;
    let onFailed!: (error: Error) => void;
    const connected = new Promise<void>((resolve, reject) => ((onConnected = resolve), (onFailed = reject)));
    const done = new Promise<void>((resolve) => {
      const req = httpRequest(open.url, { method: open.method, agent, headers: { ...open.headers, accept: 'text/event-stream' } }, (res: IncomingMessage) => {
        if (res.statusCode !== 200) return onFailed(new Error(`${open.method} ${open.url}: HTTP ${res.statusCode}`));
        onConnected();
        let pending = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = clock();
          pending += chunk;
          const frames = pending.split('\n\n');
          pending = frames.pop()!;
          for (const frame of frames) {
            const match = sequenceOf.exec(frame);
            if (match) {
              sequences.push(Number(match[1]));
              times.push(now);
            }
            if (end.test(frame)) req.destroy();
          }
        });
        res.on('close', resolve);
        res.on('error', resolve);
      });
      req.on('error', (error) => {
        onFailed(error);
        resolve();
      });
      req.end(open.body);
    });
    return { connected, done };
  };

  const followers: ReturnType<typeof follow>[] = [];
  // Connect in batches so the listen backlog is never the limit.
  for (let i = 0; i < open.count; i += 100) {
    const batch = Array.from({ length: Math.min(100, open.count - i) }, follow);
    followers.push(...batch);
    await Promise.all(batch.map((f) => f.connected));
  }
  port.postMessage('connected');
  const cpuBefore = threadCpuMs();
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  await Promise.all(followers.map((f) => f.done));
  delay.disable();
  const cpuAfter = threadCpuMs();
  const loopDelay: [number, number] = [delay.percentile(50) / 1e6, delay.percentile(99) / 1e6];
  const cpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
  const report: ClientsReport = { sequences: Int32Array.from(sequences), times: Float64Array.from(times), cpu, loopDelay };
  port.postMessage(report);
});
