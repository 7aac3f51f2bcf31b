import { Buffer } from 'node:buffer';
import { eventStreamResponse, sharedFrames, type EventStreamOptions } from '../src/http/event-stream.js';
import type { Feed } from '../src/lib/feed.js';
import type { SseEvent } from './route.js';

/** The writer's options (keep-alive, shutdown and client signals: see EventStreamOptions), and the SSE wire's own. */
export interface SseOptions extends Pick<EventStreamOptions<SseEvent>, 'keepAliveMs' | 'signal' | 'client'> {
  /** Turns a failure inside the stream into the `error` event's body. */
  describeError: (error: unknown) => { error: Record<string, unknown> };
  /** End with a bare `data: [DONE]` instead of `event: done` + `data: [DONE]`. */
  bareDone?: boolean;
}

const PING = Buffer.from(': ping\n\n');

/** One event's bytes on the wire: `event:`, `id:` and one compact `data:` line, encoded once per event object. */
export const sseFrame = sharedFrames<SseEvent>(
  ({ event: name, id, data }) => `${name ? `event: ${name}\n` : ''}${id !== undefined ? `id: ${id}\n` : ''}data: ${data}\n\n`,
);

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
 * stream that ran to its end. A feed (a run's follower) pushes its events as they come; any other
 * async iterable is read one event at a time. Either way a client that stops reading holds at
 * most STREAM_HIGH_WATER frames here: then its source is paused (see src/http/event-stream.ts).
 */
export function sseResponse(events: Feed<SseEvent> | AsyncIterable<SseEvent>, options: SseOptions, headers: Record<string, string> = {}, status = 200): Response {
  return eventStreamResponse(
    events,
    {
      keepAliveMs: options.keepAliveMs,
      signal: options.signal,
      client: options.client,
      frame: sseFrame,
      end: options.bareDone ? 'data: [DONE]\n\n' : 'event: done\ndata: [DONE]\n\n',
      failure: (error) => `event: error\ndata: ${JSON.stringify(options.describeError(error))}\n\n`,
      ping: PING,
    },
    {
      status,
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        ...headers,
      },
    },
  );
}
