import { Buffer } from 'node:buffer';
import { Readable } from 'node:stream';
import { ReadableStream as ServerReadableStream, Response as ServerResponse } from '@whatwg-node/fetch';
import { feedOf, type Feed, type FeedSink } from '../lib/feed.js';
import { onAbort } from '../lib/on-abort.js';

/**
 * Frames a stream holds for a client that has not taken them yet. Past this the source hears
 * "full" and stops pushing until the client reads (a run's follower then catches up from the
 * event log), so a client that never reads costs at most this many frames here.
 */
export const STREAM_HIGH_WATER = 32;

export interface EventStreamOptions<T> {
  keepAliveMs: number;
  /** Aborted on shutdown: the stream ends after what it has written. */
  signal: AbortSignal;
  /**
   * Aborted when the client goes away (the request's signal). A client that stopped reading
   * holds its source paused, so without this a vanished client would hold its source forever.
   */
  client?: AbortSignal;
  /** One item's bytes on the wire (a Buffer: in-process readers of the body decode Buffers). */
  frame: (item: T) => Buffer;
  /** Written once the source has run to its end. */
  end: string;
  /** Written when the source fails; the stream then closes. */
  failure: (error: unknown) => string;
  /** A comment written while the stream is idle, so that proxies keep it open. */
  ping: Buffer;
  /** Written first (graphql-sse sends an empty comment so that some browsers take the headers). */
  open?: string;
}

/**
 * `encode` as bytes, computed once per item object however many streams carry it (an event or a
 * result shared by many streams is serialised and encoded once); items are held weakly.
 */
export function sharedFrames<T extends object>(encode: (item: T) => string): (item: T) => Buffer {
  const frames = new WeakMap<T, Buffer>();
  return (item) => {
    let frame = frames.get(item);
    if (!frame) frames.set(item, (frame = Buffer.from(encode(item))));
    return frame;
  };
}

/**
 * A text/event-stream response fed by `source`: each item is written by the call that pushes it
 * (no promise per item), the stream holds at most STREAM_HIGH_WATER frames for a slow client, and
 * the source is stopped when the client goes away, the body is destroyed, or on shutdown.
 *
 * The body is a Node Readable in the server adapter's own Response (@whatwg-node/fetch, the one
 * Yoga answers with): @whatwg-node/server pipes such a body straight to the socket, where a web
 * ReadableStream (the global Response's) is pumped through a reader, a promise per frame per
 * client; with 1,000 clients on one run that pumping cost more than the writes themselves.
 * In-process callers (tests) read it as any Response body.
 */
export function eventStreamResponse<T>(source: Feed<T> | AsyncIterable<T>, options: EventStreamOptions<T>, init: ResponseInit): Response {
  return new ServerResponse(new BodyStream(new EventStreamBody(feedOf(source), options)) as unknown as BodyInit, init);
}

/**
 * The body as the server adapter's ReadableStream over the Readable (what the server pipes). An
 * in-process reader (app.fetch) reads it through Node's web adapter of the Readable instead of
 * the adapter's own reader, whose `cancel()` waits forever behind a pending `read()`.
 */
class BodyStream extends (ServerReadableStream as unknown as new (readable: Readable) => object) {
  private web: ReadableStream<Uint8Array> | undefined;

  constructor(private readonly source: Readable) {
    super(source);
  }

  private get webStream(): ReadableStream<Uint8Array> {
    return (this.web ??= Readable.toWeb(this.source) as unknown as ReadableStream<Uint8Array>);
  }

  getReader(): ReadableStreamDefaultReader<Uint8Array> {
    return this.webStream.getReader();
  }

  cancel(reason?: unknown): Promise<void> {
    return this.webStream.cancel(reason);
  }
}

/**
 * Streams piped to a socket with frames waiting for the next flush. Writing to a socket costs a
 * system call per write whatever its size, and with 1,000 clients on one run those calls are most
 * of the server's work: frames pushed between two flushes go out as one write per client. A flush
 * comes in the next turn of the event loop, but never sooner after the last one than that one
 * took (at most MAX_FLUSH_WAIT_MS), so that writing takes at most about half of the thread: when
 * writing to every client takes longer than the time between events, each write carries several
 * events instead of the writes falling behind. With few clients a flush takes microseconds and
 * frames leave in the next turn.
 */
const waiting: EventStreamBody<unknown>[] = [];
/** A flush slowed by something else (a GC pause, a busy machine) delays the next one at most this much. */
const MAX_FLUSH_WAIT_MS = 25;
let flushScheduled = false;
let nextFlushAt = 0;

function scheduleFlush(body: EventStreamBody<unknown>): void {
  waiting.push(body);
  if (flushScheduled) return;
  flushScheduled = true;
  const wait = nextFlushAt - performance.now();
  if (wait > 0) setTimeout(flushWaiting, wait).unref();
  else setImmediate(flushWaiting).unref();
}

function flushWaiting(): void {
  flushScheduled = false;
  const started = performance.now();
  for (const body of waiting.splice(0)) body.flush();
  // The writes reach the sockets when Node uncorks them, in process.nextTick callbacks queued by
  // the writes above: this one runs after them.
  process.nextTick(() => {
    const now = performance.now();
    nextFlushAt = now + Math.min(now - started, MAX_FLUSH_WAIT_MS);
  });
}

/**
 * The Readable behind eventStreamResponse, in object mode (one frame per chunk, so that its
 * high-water mark counts frames). `push` answering false is the "full" its source hears; `_read`
 * (the client took frames) lets the source push again; `_destroy` (the socket closed, or an
 * in-process reader cancelled) stops it. Piped (to a socket), its frames wait for the next flush
 * (see `waiting`) and go out merged; while the socket is full they wait for its drain, and past
 * STREAM_HIGH_WATER of them the source hears "full".
 */
class EventStreamBody<T> extends Readable {
  private released = false;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private unlisten = () => {};
  private piped = false;
  /** Frames for the next flush (piped streams only). */
  private pending: Buffer[] = [];
  private queued = false;

  constructor(
    private readonly feed: Feed<T>,
    private readonly options: EventStreamOptions<T>,
  ) {
    super({ objectMode: true, highWaterMark: STREAM_HIGH_WATER });
    // A stream opened once shutdown has begun would never hear the abort: end it now.
    if (options.signal.aborted) {
      this.stop();
      return;
    }
    const stop = () => this.stop();
    const unlistenShutdown = onAbort(options.signal, stop);
    const { client } = options;
    client?.addEventListener('abort', stop, { once: true });
    this.unlisten = () => {
      unlistenShutdown();
      client?.removeEventListener('abort', stop);
    };
    if (client?.aborted) {
      this.stop();
      return;
    }
    if (options.open) this.push(Buffer.from(options.open));
    // A ping is not queued behind frames a stalled client has not taken (a full stream).
    this.keepAlive = setInterval(() => {
      if (this.readableLength + this.pending.length < STREAM_HIGH_WATER) this.put(options.ping);
    }, options.keepAliveMs);
    const sink: FeedSink<T> = {
      push: (item) => !this.released && this.put(options.frame(item)),
      end: () => this.finish(options.end),
      fail: (error) => this.finish(options.failure(error)),
    };
    feed.start(sink);
  }

  override pipe<W extends NodeJS.WritableStream>(destination: W, options?: { end?: boolean }): W {
    this.piped = true;
    // The pipe pauses this stream while the socket is full, and resumes it once drained.
    this.on('resume', () => this.flush());
    return super.pipe(destination, options);
  }

  override _read(): void {
    // The client took frames: a source held back by a full stream may push again.
    if (!this.released) this.feed.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // The client went away. What the stream reports (a run) goes on without it.
    if (!this.released) {
      this.release(false);
      this.feed.stop();
    }
    this.pending = [];
    callback(error);
  }

  /** Pushes the waiting frames as one chunk, unless the socket is full (then they wait for its drain). */
  flush(): void {
    this.queued = false;
    if (this.destroyed || this.isPaused() || this.pending.length === 0) return;
    this.pushPending();
  }

  /** One frame: pushed at once to an in-process reader, kept for the next flush when piped. */
  private put(frame: Buffer): boolean {
    if (!this.piped) return this.push(frame);
    this.pending.push(frame);
    if (!this.queued) {
      this.queued = true;
      scheduleFlush(this as EventStreamBody<unknown>);
    }
    return this.pending.length < STREAM_HIGH_WATER;
  }

  private pushPending(): void {
    const frames = this.pending;
    this.pending = [];
    this.push(frames.length === 1 ? frames[0] : Buffer.concat(frames));
  }

  /** Shutdown, or the client's signal: the source stops, the stream ends after what it holds. */
  private stop(): void {
    this.feed.stop();
    this.release(true);
  }

  /** Writes the last frame (the end, or the failure) and ends the stream. */
  private finish(last: string): void {
    if (this.released) return;
    this.pending.push(Buffer.from(last));
    this.release(true);
  }

  /** Stops the timer and the listeners; `end` also ends the stream (after what it holds) for the client. */
  private release(end: boolean): void {
    if (this.released) return;
    this.released = true;
    clearInterval(this.keepAlive);
    this.unlisten();
    if (!end) return;
    if (this.pending.length > 0) this.pushPending();
    this.push(null);
  }
}
