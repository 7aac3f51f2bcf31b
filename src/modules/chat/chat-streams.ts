/**
 * Streamed chat completions between the mutation that starts them and the subscription that
 * delivers them. The mutation answers once the upstream answered (so its failures are plain
 * errors), and the upstream is then read to its end whatever the reader does: usage settles and
 * the log records the call even when the client went away. A stream nobody claims within
 * `CLAIM_TIMEOUT_MS` is dropped (its chunks are discarded as they come).
 */
import type { Runtime } from '../../runtime.js';
import type { WireBody } from './chat-request.js';

export const CLAIM_TIMEOUT_MS = 60_000;

export class ChunkStream {
  private readonly buffer: WireBody[] = [];
  private finished = false;
  private failure: unknown = null;
  private wake: (() => void) | null = null;
  /** Set when the reader went away: chunks are no longer kept. */
  private abandoned = false;

  constructor(readonly apiKeyId: string) {}

  push(chunk: WireBody): void {
    if (this.abandoned) return;
    this.buffer.push(chunk);
    this.notify();
  }

  end(): void {
    this.finished = true;
    this.notify();
  }

  fail(error: unknown): void {
    this.failure = error;
    this.end();
  }

  abandon(): void {
    this.abandoned = true;
    this.buffer.length = 0;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *chunks(): AsyncGenerator<WireBody> {
    try {
      for (;;) {
        while (this.buffer.length > 0) yield this.buffer.shift()!;
        if (this.finished) {
          if (this.failure) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.abandon();
    }
  }
}

interface Registry {
  /** Each stream with the timer that drops it unclaimed (cleared on claim, so a claimed stream is not held for the rest of the minute). */
  streams: Map<string, { stream: ChunkStream; timer: ReturnType<typeof setTimeout> }>;
}

const registry = (runtime: Runtime) => runtime.singleton<Registry>('chat.streams', () => ({ streams: new Map() }));

/** Registers a stream for its reader to claim by id. */
export function registerStream(runtime: Runtime, id: string, stream: ChunkStream): void {
  const { streams } = registry(runtime);
  const timer = setTimeout(() => {
    if (streams.get(id)?.stream === stream) {
      streams.delete(id);
      stream.abandon();
    }
  }, CLAIM_TIMEOUT_MS);
  timer.unref();
  streams.set(id, { stream, timer });
}

/** The stream with this id, for the API key that started it; each stream is claimed once. */
export function claimStream(runtime: Runtime, id: string, apiKeyId: string): ChunkStream | null {
  const { streams } = registry(runtime);
  const entry = streams.get(id);
  if (!entry || entry.stream.apiKeyId !== apiKeyId) return null;
  streams.delete(id);
  clearTimeout(entry.timer);
  return entry.stream;
}
