/**
 * The clients of bench/fanout.ts, in a worker thread of their own (see that file's header for
 * why). Told to open SUBSCRIBERS streams, it opens them in batches of 100, says `connected`, and
 * when every stream has ended sends back, for each event frame received, its sequence and the
 * time it arrived (performance.timeOrigin + now(), comparable across threads).
 *
 * Each stream is a raw `net` socket with a hand-written HTTP/1.1 request, not node:http: the
 * clients share the 2 cores with the server and stamp an event when their loop reaches its
 * bytes, so their own work counts as delivery time. Per socket read they take one timestamp
 * (applied to every event the read carries), strip the chunked framing, and scan the bytes for
 * the frame delimiter and the sequence marker without building strings.
 */
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';

export interface OpenMessage {
  count: number;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Precedes an event's sequence (decimal digits) in its frame. */
  sequenceAfter: string;
  /** Only where it starts a line (SSE fields), not anywhere in the frame. */
  sequenceAtLineStart: boolean;
  /** In the frame after which the client hangs up. */
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
const clock = () => performance.timeOrigin + performance.now();
const DELIMITER = Buffer.from('\n\n');
const HEAD_END = Buffer.from('\r\n\r\n');

port.on('message', async (open: OpenMessage) => {
  const sequences: number[] = [];
  const times: number[] = [];
  const marker = Buffer.from(open.sequenceAfter);
  const end = Buffer.from(open.end);
  const url = new URL(open.url);
  const headers = { ...open.headers, host: url.host, accept: 'text/event-stream', connection: 'close' } as Record<string, string>;
  if (open.body !== undefined) headers['content-length'] = String(Buffer.byteLength(open.body));
  const request = Buffer.from(
    `${open.method} ${url.pathname}${url.search} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n${open.body ?? ''}`,
  );

  /** The sequence in body[start, stop), or -1. */
  const sequenceIn = (body: Buffer, start: number, stop: number) => {
    let at = body.indexOf(marker, start);
    while (at !== -1 && at < stop && open.sequenceAtLineStart && at !== start && body[at - 1] !== 10) at = body.indexOf(marker, at + 1);
    if (at === -1 || at >= stop) return -1;
    let n = 0;
    for (let i = at + marker.length; i < stop; i++) {
      const digit = body[i] - 48;
      if (digit < 0 || digit > 9) break;
      n = n * 10 + digit;
    }
    return n;
  };

  /** One SSE client: `connected` once a 200 head is in, `done` when the socket closes. */
  const follow = () => {
    let onConnected!: () => void;
    let onFailed!: (error: Error) => void;
    const connected = new Promise<void>((resolve, reject) => ((onConnected = resolve), (onFailed = reject)));
    const done = new Promise<void>((resolve) => {
      const socket = connect({ host: url.hostname, port: Number(url.port) });
      let head: Buffer | null = Buffer.alloc(0);
      let chunked = false;
      // Chunked framing: payload bytes left in the current chunk, else reading a size line.
      let left = 0;
      let size = 0;
      let sawDigit = false;
      let inExtension = false;
      let pending: Buffer | null = null;
      const pieces: Buffer[] = [];

      /** Appends the payload bytes of `data` (from `from`) to pieces. */
      const dechunk = (data: Buffer, from: number) => {
        let i = from;
        while (i < data.length) {
          if (left > 0) {
            const n = Math.min(left, data.length - i);
            pieces.push(data.subarray(i, i + n));
            left -= n;
            i += n;
            continue;
          }
          const c = data[i++];
          if (c === 10) {
            if (!sawDigit) continue;
            left = size;
            size = 0;
            sawDigit = inExtension = false;
            if (left === 0) socket.destroy(); // last chunk
          } else if (c === 59) inExtension = true;
          else if (!inExtension && c !== 13) {
            const digit = c <= 57 ? c - 48 : (c | 32) - 87;
            size = size * 16 + digit;
            sawDigit = true;
          }
        }
      };

      socket.on('data', (data: Buffer) => {
        const now = clock();
        let from = 0;
        if (head !== null) {
          head = Buffer.concat([head, data]);
          const at = head.indexOf(HEAD_END);
          if (at === -1) return;
          const text = head.toString('latin1', 0, at);
          if (!text.startsWith('HTTP/1.1 200')) {
            onFailed(new Error(`${open.method} ${open.url}: ${text.split('\r\n')[0]}`));
            socket.destroy();
            return;
          }
          chunked = /^transfer-encoding:\s*chunked/im.test(text);
          data = head;
          from = at + 4;
          head = null;
          onConnected();
        }
        if (chunked) dechunk(data, from);
        else if (from < data.length) pieces.push(data.subarray(from));
        if (pieces.length === 0) return;
        if (pending !== null) pieces.unshift(pending);
        const body = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
        pieces.length = 0;
        let start = 0;
        let stop = body.indexOf(DELIMITER);
        if (stop === -1) {
          pending = body;
          return;
        }
        let last = stop;
        while (stop !== -1) {
          const sequence = sequenceIn(body, start, stop);
          if (sequence !== -1) {
            sequences.push(sequence);
            times.push(now);
          }
          last = stop;
          start = stop + 2;
          stop = body.indexOf(DELIMITER, start);
        }
        pending = start < body.length ? body.subarray(start) : null;
        const ended = body.indexOf(end);
        if (ended !== -1 && ended < last) socket.destroy();
      });
      socket.on('close', resolve);
      socket.on('error', (error) => {
        onFailed(error);
        resolve();
      });
      socket.write(request);
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
