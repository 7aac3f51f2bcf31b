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
  /** One item's bytes on the wire. */
  frame: (item: T) => Uint8Array;
  /** Written once the source has run to its end. */
  end: string;
  /** Written when the source fails; the stream then closes. */
  failure: (error: unknown) => string;
  /** A comment written while the stream is idle, so that proxies keep it open. */
  ping: Uint8Array;
  /** Written first (graphql-sse sends an empty comment so that some browsers take the headers). */
  open?: string;
}

const encoder = new TextEncoder();

/**
 * A text/event-stream body fed by `source`: each item is written by the call that pushes it (no
 * promise per item), the stream holds at most STREAM_HIGH_WATER frames for a slow client, and
 * the source is stopped when the client goes away, the stream is cancelled, or on shutdown.
 */
export function eventStream<T>(source: Feed<T> | AsyncIterable<T>, options: EventStreamOptions<T>): ReadableStream<Uint8Array> {
  const feed = feedOf(source);
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  let unlisten = () => {};
  let controller!: ReadableStreamDefaultController<Uint8Array>;

  const write = (bytes: Uint8Array) => {
    if (!closed) controller.enqueue(bytes);
  };
  /** Stops the timer and the listeners; `end` also closes the stream for the client. */
  const release = (end: boolean) => {
    if (closed) return;
    closed = true;
    clearInterval(keepAlive);
    unlisten();
    if (end) controller.close();
  };
  const sink: FeedSink<T> = {
    push(item) {
      if (closed) return false;
      controller.enqueue(options.frame(item));
      return (controller.desiredSize ?? 0) > 0;
    },
    end() {
      if (closed) return;
      write(encoder.encode(options.end));
      release(true);
    },
    fail(error) {
      if (closed) return;
      write(encoder.encode(options.failure(error)));
      release(true);
    },
  };

  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        // A stream opened once shutdown has begun would never hear the abort: end it now.
        if (options.signal.aborted) {
          feed.stop();
          release(true);
          return;
        }
        const stop = () => {
          feed.stop();
          release(true);
        };
        const unlistenShutdown = onAbort(options.signal, stop);
        const { client } = options;
        client?.addEventListener('abort', stop, { once: true });
        unlisten = () => {
          unlistenShutdown();
          client?.removeEventListener('abort', stop);
        };
        if (client?.aborted) return stop();
        if (options.open) write(encoder.encode(options.open));
        // A ping is only worth sending to a client that has taken everything written so far.
        keepAlive = setInterval(() => {
          if (controller.desiredSize === STREAM_HIGH_WATER) write(options.ping);
        }, options.keepAliveMs);
        feed.start(sink);
      },
      pull() {
        // The client took frames: a source held back by a full stream may push again.
        if (!closed) feed.resume();
      },
      cancel() {
        // The client went away. What the stream reports (a run) goes on without it.
        release(false);
        feed.stop();
      },
    },
    new CountQueuingStrategy({ highWaterMark: STREAM_HIGH_WATER }),
  );
}
