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
 * The Readable behind eventStreamResponse, in object mode (one frame per chunk, so that its
 * high-water mark counts frames). `push` answering false is the "full" its source hears; `_read`
 * (the client took frames) lets the source push again; `_destroy` (the socket closed, or an
 * in-process reader cancelled) stops it.
 */
class EventStreamBody<T> extends Readable {
  private released = false;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private unlisten = () => {};

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
      if (this.readableLength < STREAM_HIGH_WATER) this.push(options.ping);
    }, options.keepAliveMs);
    const sink: FeedSink<T> = {
      push: (item) => !this.released && this.push(options.frame(item)),
      end: () => this.finish(options.end),
      fail: (error) => this.finish(options.failure(error)),
    };
    feed.start(sink);
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
    callback(error);
  }

  /** Shutdown, or the client's signal: the source stops, the stream ends after what it holds. */
  private stop(): void {
    this.feed.stop();
    this.release(true);
  }

  /** Writes the last frame (the end, or the failure) and ends the stream. */
  private finish(last: string): void {
    if (this.released) return;
    this.push(Buffer.from(last));
    this.release(true);
  }

  /** Stops the timer and the listeners; `end` also ends the stream for the client. */
  private release(end: boolean): void {
    if (this.released) return;
    this.released = true;
    clearInterval(this.keepAlive);
    this.unlisten();
    if (end) this.push(null);
  }
}
