/**
 * src/http/event-stream.ts when its body is piped (as @whatwg-node/server pipes it to the socket):
 * frames pushed between two flushes reach the socket as one write; while the socket is full the
 * stream keeps at most STREAM_HIGH_WATER frames and its source hears "full", then, once the socket
 * drains, the waiting frames go out as one write and the source is resumed; the socket closing
 * stops the source.
 */
import type { Readable } from 'node:stream';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { SseEvent } from '../../../rest/route.js';
import { sseResponse } from '../../../rest/sse.js';
import { STREAM_HIGH_WATER } from '../../../src/http/event-stream.js';
import { iterateFeed, type Feed, type FeedSink } from '../../../src/lib/feed.js';

const frame = (id: number) => `event: e\nid: ${id}\ndata: {}\n\n`;
const frames = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => frame(from + i)).join('');
/** Two turns of the event loop: a flush comes in the next one (or after the last one's length). */
const turns = async () => {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setTimeout(resolve, 30));
};

/** A feed the test pushes into, counting resumes and stops. */
function feed() {
  const state = { sink: null as FeedSink<SseEvent> | null, resumed: 0, stopped: 0 };
  const source: Feed<SseEvent> = {
    start: (sink) => (state.sink = sink),
    resume: () => state.resumed++,
    stop: () => state.stopped++,
    [Symbol.asyncIterator]: () => iterateFeed(source),
  };
  return { source, state, push: (id: number) => state.sink!.push({ event: 'e', id, data: '{}' }) };
}

/** A socket stand-in recording each write; `stall` holds its writes' callbacks (a full socket). */
function socket(stalled = false) {
  const writes: string[] = [];
  const held: (() => void)[] = [];
  const writable = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, callback) {
      writes.push(chunk.toString());
      if (stalled) held.push(() => callback());
      else callback();
    },
  });
  return {
    writable,
    writes,
    drain() {
      stalled = false;
      for (const release of held.splice(0)) release();
    },
  };
}

const options = { keepAliveMs: 60_000, signal: new AbortController().signal, describeError: () => ({ error: { message: 'x' } }) };

describe('an event stream piped to a socket', () => {
  it('frames pushed between two flushes reach the socket as one write', async () => {
    const { source, push } = feed();
    const out = socket();
    (sseResponse(source, options).body as unknown as Readable).pipe(out.writable);
    expect([push(1), push(2), push(3)]).toEqual([true, true, true]);
    await turns();
    expect(out.writes).toEqual([frames(1, 3)]);
    push(4);
    await turns();
    expect(out.writes).toEqual([frames(1, 3), frame(4)]);
  });

  it('a full socket holds at most STREAM_HIGH_WATER frames here; on its drain they go as one write and the source resumes', async () => {
    const { source, state, push } = feed();
    const out = socket(true);
    (sseResponse(source, options).body as unknown as Readable).pipe(out.writable);
    push(1);
    await turns();
    expect(out.writes).toEqual([frame(1)]);
    // The socket has not taken frame 1: what follows waits here, up to the bound.
    const answers = Array.from({ length: STREAM_HIGH_WATER }, (_, i) => push(i + 2));
    expect(answers.slice(0, -1).every(Boolean)).toBe(true);
    expect(answers.at(-1)).toBe(false);
    await turns();
    expect(out.writes).toHaveLength(1);
    const resumed = state.resumed;
    out.drain();
    await turns();
    expect(out.writes).toEqual([frame(1), frames(2, STREAM_HIGH_WATER + 1)]);
    expect(state.resumed).toBeGreaterThan(resumed);
  });

  it('the socket closing stops the source', async () => {
    const { source, state, push } = feed();
    const out = socket();
    const body = sseResponse(source, options).body as unknown as Readable;
    body.pipe(out.writable);
    push(1);
    body.destroy();
    await turns();
    expect(state.stopped).toBe(1);
    expect(out.writes).toEqual([]);
  });
});
