import { Buffer } from 'node:buffer';
import { ServerResponse as NodeResponse } from 'node:http';
import type { Socket } from 'node:net';
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
 * result shared by many streams is serialised and encoded once); items are held weakly, but
 * for the last one asked for: the streams of one source ask for the same item one after another.
 */
export function sharedFrames<T extends object>(encode: (item: T) => string): (item: T) => Buffer {
  const frames = new WeakMap<T, Buffer>();
  let lastItem: T | undefined;
  let lastFrame: Buffer | undefined;
  return (item) => {
    if (item === lastItem) return lastFrame!;
    let frame = frames.get(item);
    if (!frame) frames.set(item, (frame = Buffer.from(encode(item))));
    lastItem = item;
    lastFrame = frame;
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
 * system call per write whatever its size (on 127.0.0.1 the kernel delivers the bytes to the
 * reader inside that call), and with 1,000 clients on one run those calls are most of the
 * server's work: frames pushed between two flushes go out as one write per client. A flush comes
 * in the next turn of the event loop, but never sooner after the last one than FLUSH_SPACING
 * times what that one took (at most MAX_FLUSH_WAIT_MS), so that writing takes at most about a
 * quarter of the thread: when writing to every client takes longer than the time between
 * events, each write carries several events instead of the writes falling behind (1,000 clients
 * of a run streaming a delta every 10 ms: ~3 events a write, p50 a little higher, a third of the
 * system calls). With few clients a flush takes microseconds and frames leave in the next turn.
 */
const waiting: EventStreamBody<unknown>[] = [];
/** The wait after a flush, as a multiple of the time it took. */
const FLUSH_SPACING = 3;
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
  // Each write reaches its socket within the call (see Wire), so the time taken is the writes'.
  for (const body of waiting.splice(0)) body.flush();
  const now = performance.now();
  nextFlushAt = now + Math.min((now - started) * FLUSH_SPACING, MAX_FLUSH_WAIT_MS);
}

/** Where a piped stream's frames go. */
interface Wire {
  /** Writes one flush's frames; false when the destination is full (wait for `drainer`'s `drain`). */
  write(frames: Buffer[]): boolean;
  /** Emits `drain` once a full destination has room again. */
  readonly drainer: NodeJS.EventEmitter;
  /** Ends the response after `frames` (the last flush's, possibly none). */
  end(frames: Buffer[]): void;
  /** Sends what was written since the wire was made (the head first) in one system call. */
  opened(): void;
}

/**
 * The response's own socket, when the destination is a node:http response alone on it: the
 * frames are written to the socket as one HTTP chunk (`size CRLF bytes CRLF`), one call and one
 * system call per flush. Written through the response instead, each write is four writes to
 * the corked socket and an uncork in a later tick, several times the cost of the system call.
 * The headers are written first, with the socket corked until `opened()`: the frames the stream
 * holds when it is piped (a run's events so far) leave with them, one system call instead of two.
 * The response ends (its last chunk) as any response does.
 */
function socketWire(destination: NodeJS.WritableStream): Wire | null {
  if (!(destination instanceof NodeResponse)) return null;
  // node:http's own fields: whether the response may have a body, whether its head has left
  // (`headersSent` is true as soon as it is written down), and what it holds for its socket.
  const response = destination as NodeResponse & { _hasBody?: boolean; _headerSent?: boolean; outputData?: unknown[] };
  if (response._hasBody !== true || response.writableEnded) return null;
  const socket = response.socket as (Socket & { _httpMessage?: unknown }) | null;
  const own = () => socket !== null && socket._httpMessage === response && socket.writable;
  // Only a socket the response writes to directly is corked (else the head waits in the response).
  const corked = own();
  if (corked) socket!.cork();
  if (response._headerSent !== true) response.flushHeaders();
  // Anything the response still holds (a socket not yet its own) would come after direct writes.
  if (!own() || response._headerSent !== true || response.outputData?.length !== 0) {
    if (corked) socket!.uncork();
    return null;
  }
  const chunked = response.chunkedEncoding;
  const bytes = (frames: Buffer[]) => (chunked ? httpChunk(frames) : joined(frames));
  return {
    write: (frames) => socket!.write(bytes(frames)),
    drainer: socket!,
    end: (frames) => {
      // The last frames and the response's end (its last chunk) in one system call: end() uncorks.
      if (frames.length > 0) {
        socket!.cork();
        socket!.write(bytes(frames));
      }
      response.end();
    },
    // end() may have uncorked it already: uncork() on a socket not corked does nothing.
    opened: () => corked && socket!.uncork(),
  };
}

/** Any other destination (an HTTP/2 response, a test's Writable): one `write` per flush. */
function writableWire(destination: NodeJS.WritableStream): Wire {
  return {
    write: (frames) => destination.write(joined(frames)),
    drainer: destination,
    end: (frames) => {
      if (frames.length > 0) destination.write(joined(frames));
      destination.end();
    },
    opened: () => {},
  };
}

/** One frame as an HTTP chunk, built once per frame (a shared event's frame is shared). */
const chunks = new WeakMap<Buffer, Buffer>();
/** The last multi-frame chunk built: clients following one source flush the same frames. */
let lastFrames: Buffer[] = [];
let lastChunk: Buffer | undefined;

function httpChunk(frames: Buffer[]): Buffer {
  if (frames.length === 1) {
    const frame = frames[0];
    let chunk = chunks.get(frame);
    if (!chunk) chunks.set(frame, (chunk = chunkOf(frames)));
    return chunk;
  }
  if (lastChunk && sameFrames(frames, lastFrames)) return lastChunk;
  lastFrames = frames;
  return (lastChunk = chunkOf(frames));
}

function chunkOf(frames: Buffer[]): Buffer {
  let size = 0;
  for (const frame of frames) size += frame.length;
  // A chunk of size 0 is the response's terminating chunk: frames of no bytes are written as nothing.
  if (size === 0) return Buffer.alloc(0);
  const head = `${size.toString(16)}\r\n`;
  const chunk = Buffer.allocUnsafe(head.length + size + 2);
  let at = chunk.write(head, 0, 'latin1');
  for (const frame of frames) at += frame.copy(chunk, at);
  chunk.write('\r\n', at, 'latin1');
  return chunk;
}

function sameFrames(a: Buffer[], b: Buffer[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const joined = (frames: Buffer[]): Buffer => (frames.length === 1 ? frames[0] : Buffer.concat(frames));

/**
 * The Readable behind eventStreamResponse, in object mode (one frame per chunk, so that its
 * high-water mark counts frames). Read in-process (a test's app.fetch), each frame is pushed
 * at once: `push` answering false is the "full" its source hears, and `_read` (the reader took
 * frames) lets the source push again. Piped (the server sends the body to its socket), frames
 * bypass the Readable: they wait for the next flush (see `waiting`) and go out merged in one
 * write (see Wire); while the destination is full they wait for its drain, and past
 * STREAM_HIGH_WATER of them the source hears "full" until they are written. `_destroy` (the
 * socket closed, or an in-process reader cancelled) stops the source.
 */
class EventStreamBody<T> extends Readable {
  private released = false;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private unlisten = () => {};
  /** Where flushed frames go, once piped. */
  private wire: Wire | undefined;
  /** Frames for the next flush (piped streams only). */
  private pending: Buffer[] = [];
  private queued = false;
  /** Waiting for the destination's drain. */
  private blocked = false;
  /** The source heard "full" and waits for `resume()`. */
  private full = false;
  /** The source has ended: the response ends once the pending frames are written. */
  private ending = false;

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

  override pipe<W extends NodeJS.WritableStream>(destination: W): W {
    const wire = socketWire(destination) ?? writableWire(destination);
    this.wire = wire;
    // What was pushed before (the opening comment, a run's events so far) goes first, with the head.
    const early: Buffer[] = [];
    for (let frame: Buffer | null; (frame = this.read() as Buffer | null) !== null; ) early.push(frame);
    try {
      if (this.released) {
        // The source ended before the body was piped: reading its end destroys this stream in a
        // later tick (and with it what waits for a flush), so all of it is written now.
        wire.end(early);
        return destination;
      }
      this.pending.push(...early);
      if (this.pending.length > 0) this.flush();
    } finally {
      wire.opened();
    }
    return destination;
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

  /** Writes the waiting frames as one write, unless the destination is full (then they wait for its drain). */
  flush(): void {
    this.queued = false;
    const wire = this.wire!;
    if (this.destroyed || this.blocked) return;
    if (this.ending) {
      // The last frames go with the end (one write); a full destination takes them all the same.
      this.ending = false;
      const frames = this.pending;
      this.pending = [];
      wire.end(frames);
      return;
    }
    if (this.pending.length > 0) {
      const frames = this.pending;
      this.pending = [];
      if (!wire.write(frames)) {
        this.blocked = true;
        wire.drainer.once('drain', () => {
          this.blocked = false;
          this.flush();
        });
      }
    }
    if (this.full && !this.blocked && !this.released) {
      this.full = false;
      this.feed.resume();
    }
  }

  private schedule(): void {
    if (this.queued) return;
    this.queued = true;
    scheduleFlush(this as EventStreamBody<unknown>);
  }

  /** One frame: pushed at once to an in-process reader, kept for the next flush when piped. */
  private put(frame: Buffer): boolean {
    if (!this.wire) return this.push(frame);
    this.pending.push(frame);
    this.schedule();
    if (this.pending.length < STREAM_HIGH_WATER) return true;
    this.full = true;
    return false;
  }

  /** Shutdown, or the client's signal: the source stops, the stream ends after what it holds. */
  private stop(): void {
    this.feed.stop();
    this.release(true);
  }

  /** Writes the last frame (the end, or the failure) and ends the stream. */
  private finish(last: string): void {
    if (this.released) return;
    if (this.wire) this.pending.push(Buffer.from(last));
    else this.push(Buffer.from(last));
    this.release(true);
  }

  /** Stops the timer and the listeners; `end` also ends the stream (after what it holds) for the client. */
  private release(end: boolean): void {
    if (this.released) return;
    this.released = true;
    clearInterval(this.keepAlive);
    this.unlisten();
    if (!end) return;
    if (!this.wire) return void this.push(null);
    this.ending = true;
    this.schedule();
  }
}
