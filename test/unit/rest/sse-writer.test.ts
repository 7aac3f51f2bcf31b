/**
 * rest/sse.ts on its own: the wire format of each event, `: ping` keep-alive comments while the
 * source is idle, a failure inside the stream written as `event: error` with the describeError
 * body (then the stream closes without `[DONE]`), the shutdown signal ending the stream, and a
 * client that goes away releasing the source, the timer and the shutdown listener.
 */
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SseEvent } from '../../../rest/route.js';
import { sseResponse, type SseOptions } from '../../../rest/sse.js';

const decoder = new TextDecoder();

/** A source the test drives: `push` an event, `fail` with an error, `end` it; records `return()`. */
function source() {
  const queue: SseEvent[] = [];
  let wake: (() => void) | null = null;
  let failure: unknown = null;
  let ended = false;
  const state = { returned: 0 };
  const iterator: AsyncIterableIterator<SseEvent> = {
    async next() {
      while (queue.length === 0 && failure === null && !ended) await new Promise<void>((resolve) => (wake = resolve));
      if (queue.length > 0) return { value: queue.shift()!, done: false };
      if (failure !== null) throw failure;
      return { value: undefined, done: true };
    },
    async return() {
      state.returned++;
      ended = true;
      wake?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  return {
    iterator,
    state,
    push(event: SseEvent) {
      queue.push(event);
      poke();
    },
    fail(error: unknown) {
      failure = error;
      poke();
    },
    end() {
      ended = true;
      poke();
    },
  };
}

/**
 * Lets pending callbacks run: promise callbacks (the source's loop), then a turn of the event loop
 * (the body is a Node Readable, which hands data on to its reader in process.nextTick callbacks).
 */
const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
};

/** Everything the response has enqueued so far, without waiting for more. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, pending: { read?: Promise<ReadableStreamReadResult<Uint8Array>> }) {
  let text = '';
  let done = false;
  for (;;) {
    pending.read ??= reader.read();
    const result = await Promise.race([pending.read, settle().then(() => null)]);
    if (result === null) break;
    pending.read = undefined;
    if (result.done) {
      done = true;
      break;
    }
    text += decoder.decode(result.value);
  }
  return { text, done };
}

function options(overrides: Partial<SseOptions> = {}): SseOptions & { described: unknown[] } {
  const described: unknown[] = [];
  return {
    keepAliveMs: 100,
    signal: new AbortController().signal,
    describeError: (error) => {
      described.push(error);
      return { error: { message: (error as Error).message, type: 'server_error', param: null, code: null } };
    },
    described,
    ...overrides,
  };
}

beforeEach(() => {
  // Only the keep-alive interval is faked: streams and promises run for real.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('sseResponse', () => {
  it('writes event, id and one data line per event, then event: done / data: [DONE]', async () => {
    const src = source();
    const response = sseResponse(src.iterator, options(), { 'x-extra': 'yes' }, 246);
    expect(response.status).toBe(246);
    expect(Object.fromEntries(response.headers)).toEqual({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-extra': 'yes',
    });
    src.push({ event: 'thread.run.created', id: 1, data: '{"id":"run_1"}' });
    src.push({ event: 'no.id', data: '{"a":[1,2]}' });
    src.end();
    expect(await response.text()).toBe(
      'event: thread.run.created\nid: 1\ndata: {"id":"run_1"}\n\n' + 'event: no.id\ndata: {"a":[1,2]}\n\n' + 'event: done\ndata: [DONE]\n\n',
    );
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes `: ping` comments while the source is idle, and stops them when the stream ends', async () => {
    const src = source();
    const reader = sseResponse(src.iterator, options({ keepAliveMs: 100 })).body!.getReader();
    const pending = {};
    expect(await drain(reader, pending)).toEqual({ text: '', done: false });

    vi.advanceTimersByTime(99);
    expect((await drain(reader, pending)).text).toBe('');
    vi.advanceTimersByTime(1);
    expect((await drain(reader, pending)).text).toBe(': ping\n\n');
    vi.advanceTimersByTime(200);
    expect((await drain(reader, pending)).text).toBe(': ping\n\n: ping\n\n');

    src.push({ event: 'thread.run.queued', id: 2, data: '{}' });
    expect((await drain(reader, pending)).text).toBe('event: thread.run.queued\nid: 2\ndata: {}\n\n');
    vi.advanceTimersByTime(100);
    expect((await drain(reader, pending)).text).toBe(': ping\n\n');

    src.end();
    expect(await drain(reader, pending)).toEqual({ text: 'event: done\ndata: [DONE]\n\n', done: true });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a failure inside the stream is written as event: error with the describeError body, then the stream closes', async () => {
    const src = source();
    const opts = options();
    const reader = sseResponse(src.iterator, opts).body!.getReader();
    const pending = {};
    src.push({ event: 'thread.run.created', id: 1, data: '{}' });
    expect((await drain(reader, pending)).text).toBe('event: thread.run.created\nid: 1\ndata: {}\n\n');
    const boom = new Error('upstream exploded');
    src.fail(boom);
    // No [DONE]: the stream did not run to its end.
    expect(await drain(reader, pending)).toEqual({
      text: 'event: error\ndata: {"error":{"message":"upstream exploded","type":"server_error","param":null,"code":null}}\n\n',
      done: true,
    });
    expect(opts.described).toEqual([boom]);
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(opts.signal, 'abort')).toHaveLength(0);
  });

  it('a source that fails at once still answers 200 with just the error event', async () => {
    const failing: AsyncIterable<SseEvent> = {
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.reject(Object.assign(new Error('no'), { code: 'x' })),
      }),
    };
    const response = sseResponse(failing, {
      keepAliveMs: 100,
      signal: new AbortController().signal,
      describeError: () => ({ error: { message: 'Internal server error (request r-1).', type: 'server_error', param: null, code: null } }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(
      'event: error\ndata: {"error":{"message":"Internal server error (request r-1).","type":"server_error","param":null,"code":null}}\n\n',
    );
  });

  it('the shutdown signal ends the stream after what it has written, and releases the source', async () => {
    const src = source();
    const shutdown = new AbortController();
    const reader = sseResponse(src.iterator, options({ signal: shutdown.signal })).body!.getReader();
    const pending = {};
    src.push({ event: 'thread.run.in_progress', id: 3, data: '{}' });
    expect((await drain(reader, pending)).text).toBe('event: thread.run.in_progress\nid: 3\ndata: {}\n\n');
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);

    shutdown.abort();
    expect(await drain(reader, pending)).toEqual({ text: '', done: true });
    expect(src.state.returned).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    // A late event from the source is never written after the close.
    src.push({ event: 'late', id: 4, data: '{}' });
    await settle();
  });

  it('a signal already aborted (a stream opened during shutdown) ends the stream at once', async () => {
    const src = source();
    const shutdown = new AbortController();
    shutdown.abort();
    const reader = sseResponse(src.iterator, options({ signal: shutdown.signal })).body!.getReader();
    expect(await drain(reader, {})).toEqual({ text: '', done: true });
    expect(src.state.returned).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a client that goes away releases the source, the keep-alive timer and the shutdown listener', async () => {
    const src = source();
    const shutdown = new AbortController();
    const reader = sseResponse(src.iterator, options({ signal: shutdown.signal })).body!.getReader();
    src.push({ event: 'thread.run.created', id: 1, data: '{}' });
    expect((await drain(reader, {})).text).toBe('event: thread.run.created\nid: 1\ndata: {}\n\n');
    await reader.cancel();
    await settle();
    expect(src.state.returned).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    // Shutdown afterwards finds nothing left to close.
    expect(() => shutdown.abort()).not.toThrow();
  });

  it('a shutdown after the stream ended normally is harmless', async () => {
    const src = source();
    const shutdown = new AbortController();
    const response = sseResponse(src.iterator, options({ signal: shutdown.signal }));
    src.end();
    expect(await response.text()).toBe('event: done\ndata: [DONE]\n\n');
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    expect(() => shutdown.abort()).not.toThrow();
    expect(src.state.returned).toBe(0);
  });
});
