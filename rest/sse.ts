import { onAbort } from '../src/lib/on-abort.js';
import type { SseEvent } from './route.js';

export interface SseOptions {
  keepAliveMs: number;
  /** Aborted on shutdown: the stream ends after what it has written. */
  signal: AbortSignal;
  /** Turns a failure inside the stream into the `error` event's body. */
  describeError: (error: unknown) => { error: Record<string, unknown> };
  /** End with a bare `data: [DONE]` instead of `event: done` + `data: [DONE]`. */
  bareDone?: boolean;
  /**
   * Aborted when the client goes away (the request's signal). The stream only reads its source
   * for a client that reads, so without this a vanished client would hold its source forever.
   */
  client?: AbortSignal;
}

const encoder = new TextEncoder();
const PING = encoder.encode(': ping\n\n');

/** Encoded frames by event object: an event shared by many streams is encoded once. */
const frames = new WeakMap<SseEvent, Uint8Array>();

/** One event's bytes on the wire: `event:`, `id:` and one compact `data:` line. */
export function sseFrame(event: SseEvent): Uint8Array {
  let frame = frames.get(event);
  if (!frame) {
    const { event: name, id, data } = event;
    frame = encoder.encode(`${name ? `event: ${name}\n` : ''}${id !== undefined ? `id: ${id}\n` : ''}data: ${data}\n\n`);
    frames.set(event, frame);
  }
  return frame;
}

/**
 * `toEvent`, computed once per published payload however many streams follow it. Every stream
 * of a topic receives the payload's `data` by reference (see PubSub), so that object keys the
 * shared event; `matches` guards against one data object appearing under two events.
 */
export function sharedEvents<P>(keyOf: (payload: P) => unknown, toEvent: (payload: P) => SseEvent, matches: (event: SseEvent, payload: P) => boolean): (payload: P) => SseEvent {
  const events = new WeakMap<object, SseEvent>();
  return (payload) => {
    const key = keyOf(payload);
    if (typeof key !== 'object' || key === null) return toEvent(payload);
    const known = events.get(key);
    if (known && matches(known, payload)) return known;
    const event = toEvent(payload);
    events.set(key, event);
    return event;
  };
}

/**
 * Writes events as text/event-stream; `: ping` comments keep idle connections open (SDKs parse
 * every data line as JSON, so pings must be comments); `event: done` / `data: [DONE]` closes a
 * stream that ran to its end. The source is read only when the client has taken what was
 * written (the stream pulls), so a client that stops reading holds no more than one frame
 * here: the backlog stays bounded in the source (see PubSub's queue limit).
 */
export function sseResponse(events: AsyncIterable<SseEvent>, options: SseOptions, headers: Record<string, string> = {}, status = 200): Response {
  const iterator = events[Symbol.asyncIterator]();
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  let unlisten = () => {};
  let controller!: ReadableStreamDefaultController<Uint8Array>;

  const write = (bytes: Uint8Array) => {
    if (!closed) controller.enqueue(bytes);
  };
  const writeText = (text: string) => write(encoder.encode(text));
  /** Stops the timer and the shutdown callback; `end` also closes the stream for the client. */
  const release = (end: boolean) => {
    if (closed) return;
    closed = true;
    clearInterval(keepAlive);
    unlisten();
    if (end) controller.close();
  };

  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      // A stream opened once shutdown has begun would never hear the abort: end it now.
      if (options.signal.aborted) {
        void iterator.return?.();
        release(true);
        return;
      }
      const stop = () => {
        void iterator.return?.();
        release(true);
      };
      const unlistenShutdown = onAbort(options.signal, stop);
      const { client } = options;
      client?.addEventListener('abort', stop, { once: true });
      unlisten = () => {
        unlistenShutdown();
        client?.removeEventListener('abort', stop);
      };
      if (client?.aborted) stop();
      // A ping is only worth sending to a client that is reading (nothing is queued for it).
      keepAlive = setInterval(() => {
        if ((controller.desiredSize ?? 0) > 0) write(PING);
      }, options.keepAliveMs);
    },
    async pull() {
      if (closed) return;
      try {
        const next = await iterator.next();
        if (closed) return;
        if (next.done) {
          writeText(options.bareDone ? 'data: [DONE]\n\n' : 'event: done\ndata: [DONE]\n\n');
          release(true);
          return;
        }
        write(sseFrame(next.value));
      } catch (error) {
        writeText(`event: error\ndata: ${JSON.stringify(options.describeError(error))}\n\n`);
        release(true);
      }
    },
    cancel() {
      // The client went away. What the stream reports (a run) goes on without it.
      release(false);
      void iterator.return?.();
    },
  });

  return new Response(stream, {
    status,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    },
  });
}
