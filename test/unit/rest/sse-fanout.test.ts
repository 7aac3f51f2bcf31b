/**
 * rest/sse.ts for many streams of one source: an event shared by all streams is serialised and
 * encoded once (sharedEvents, sseFrame); a client that stops reading holds the source back (the
 * stream takes at most STREAM_HIGH_WATER events, then the source waits) instead of queueing what
 * the source produces; a pushing source (a Feed) hears "full" at that bound and is resumed once
 * the client reads; and 100 open
 * streams hold one listener on the shutdown signal, with no MaxListenersExceededWarning.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { SseEvent } from '../../../rest/route.js';
import { sharedEvents, sseFrame, sseResponse } from '../../../rest/sse.js';
import { STREAM_HIGH_WATER } from '../../../src/http/event-stream.js';
import { iterateFeed, type Feed, type FeedSink } from '../../../src/lib/feed.js';

type Payload = { sequence: number; event: string; data: unknown };

function options(signal: AbortSignal) {
  return { keepAliveMs: 60_000, signal, describeError: () => ({ error: { message: 'x' } }) };
}

/** A source that counts how many events were taken from it. */
function counting(limit: number) {
  const state = { taken: 0, returned: false };
  const iterable: AsyncIterable<SseEvent> = {
    [Symbol.asyncIterator]: () => ({
      async next() {
        if (state.taken >= limit) return { value: undefined, done: true };
        state.taken++;
        return { value: { event: 'e', id: state.taken, data: '{}' }, done: false };
      },
      async return() {
        state.returned = true;
        return { value: undefined, done: true };
      },
    }),
  };
  return { iterable, state };
}

describe('SSE fan-out', () => {
  it('an event received by 200 streams is serialised once and encoded once', () => {
    let serialised = 0;
    const toSse = sharedEvents<Payload>(
      (payload) => payload.data,
      (payload) => {
        serialised++;
        return { event: payload.event, id: payload.sequence, data: JSON.stringify(payload.data) };
      },
      (event, payload) => event.id === payload.sequence && event.event === payload.event,
    );
    const data = { id: 'msg_1', delta: { content: [{ text: { value: 'hi' } }] } };
    // Each stream gets its own wrapper (a GraphQL execution result) around the shared data.
    const frames = Array.from({ length: 200 }, () => sseFrame(toSse({ sequence: 7, event: 'thread.message.delta', data })));
    expect(serialised).toBe(1);
    expect(new Set(frames).size).toBe(1);
    expect(new TextDecoder().decode(frames[0])).toBe(`event: thread.message.delta\nid: 7\ndata: ${JSON.stringify(data)}\n\n`);
  });

  it('the same data object under another event or sequence is serialised for it', () => {
    const toSse = sharedEvents<Payload>(
      (payload) => payload.data,
      (payload) => ({ event: payload.event, id: payload.sequence, data: JSON.stringify(payload.data) }),
      (event, payload) => event.id === payload.sequence && event.event === payload.event,
    );
    const data = { id: 'run_1' };
    expect(toSse({ sequence: 1, event: 'thread.run.created', data }).id).toBe(1);
    expect(toSse({ sequence: 2, event: 'thread.run.queued', data })).toMatchObject({ id: 2, event: 'thread.run.queued' });
    expect(toSse({ sequence: 3, event: 'x', data: 'plain' })).toEqual({ event: 'x', id: 3, data: '"plain"' });
  });

  it('a client that never reads holds the source back: only what the stream holds is taken', async () => {
    const { iterable, state } = counting(10_000);
    const response = sseResponse(iterable, options(new AbortController().signal));
    for (let i = 0; i < 100; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(state.taken).toBe(STREAM_HIGH_WATER);
    // Reading resumes the source, in order.
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe('event: e\nid: 1\ndata: {}\n\n');
    await reader.cancel();
    expect(state.returned).toBe(true);
  });

  it('a pushing source (a Feed) hears "full" at the bound, and is resumed once the client reads', async () => {
    let sink!: FeedSink<SseEvent>;
    let resumed = 0;
    const feed: Feed<SseEvent> = {
      start: (s) => (sink = s),
      resume: () => resumed++,
      stop: () => {},
      [Symbol.asyncIterator]: () => iterateFeed(feed),
    };
    const response = sseResponse(feed, options(new AbortController().signal));
    const answers = Array.from({ length: STREAM_HIGH_WATER }, (_, i) => sink.push({ event: 'e', id: i + 1, data: '{}' }));
    expect(answers.slice(0, -1).every(Boolean)).toBe(true);
    expect(answers.at(-1)).toBe(false);
    const before = resumed;
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('event: e\nid: 1\ndata: {}\n\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(resumed).toBeGreaterThan(before);
    await reader.cancel();
  });

  it('a client that goes away (its request signal aborts) releases the source', async () => {
    const { iterable, state } = counting(10_000);
    const client = new AbortController();
    const response = sseResponse(iterable, { ...options(new AbortController().signal), client: client.signal });
    client.abort();
    expect(state.returned).toBe(true);
    expect(getEventListeners(client.signal, 'abort')).toHaveLength(0);
    await response.body!.cancel();
  });

  it('100 open streams hold one shutdown listener, warn nothing, and all end on shutdown', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const shutdown = new AbortController();
      const sources = Array.from({ length: 100 }, () => counting(1));
      const responses = sources.map(({ iterable }) => sseResponse(iterable, options(shutdown.signal)));
      expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
      shutdown.abort();
      const texts = await Promise.all(responses.map((response) => response.text()));
      expect(texts.every((text) => !text.includes('[DONE]'))).toBe(true);
      expect(sources.every(({ state }) => state.returned)).toBe(true);
      expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
