/**
 * src/lib/pubsub.ts: every subscriber gets every payload in order, by reference; a subscriber
 * that does not read is bounded (its queue never exceeds the limit: `end` closes it, `discard`
 * drops the backlog and goes on); and any number of subscriptions share one listener on the
 * shutdown signal (no MaxListenersExceededWarning), which is gone once they all end.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { PubSub } from '../../../src/lib/pubsub.js';

async function take<T>(iterator: AsyncIterator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) {
    const next = await iterator.next();
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
process.on('warning', onWarning);
afterEach(() => {
  warnings.length = 0;
});

describe('PubSub', () => {
  it('delivers every payload, in order and by reference, to each of 200 subscribers', async () => {
    const pubsub = new PubSub();
    const subs = Array.from({ length: 200 }, () => pubsub.subscribe<{ n: number }>('t'));
    const payloads = Array.from({ length: 50 }, (_, n) => ({ n }));
    for (const payload of payloads) pubsub.publish('t', payload);
    for (const sub of subs) {
      const got = await take(sub, 50);
      expect(got).toHaveLength(50);
      got.forEach((payload, i) => expect(payload).toBe(payloads[i]));
      await sub.return!();
    }
    expect(pubsub.listenerCount('t')).toBe(0);
  });

  it('ends a subscriber whose queue is full (default overflow), after what it holds; the others go on', async () => {
    const pubsub = new PubSub();
    const slow = pubsub.subscribe<number>('t', undefined, { limit: 5 });
    const fast = pubsub.subscribe<number>('t', undefined, { limit: 5 });
    const fastGot: number[] = [];
    for (let n = 1; n <= 20; n++) {
      pubsub.publish('t', n);
      expect(pubsub.maxQueued('t')).toBeLessThanOrEqual(5);
      fastGot.push(...(await take(fast, 1)));
    }
    expect(fastGot).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await take(slow, 100)).toEqual([1, 2, 3, 4, 5]);
    expect(await slow.next()).toEqual({ value: undefined, done: true });
    expect(pubsub.listenerCount('t')).toBe(1);
  });

  it('with overflow discard, drops the backlog of a full queue and keeps delivering the newest', async () => {
    const pubsub = new PubSub();
    const slow = pubsub.subscribe<number>('t', undefined, { limit: 4, overflow: 'discard' });
    for (let n = 1; n <= 10; n++) {
      pubsub.publish('t', n);
      expect(pubsub.maxQueued('t')).toBeLessThanOrEqual(4);
    }
    // 1–4 filled the queue, 5 dropped them, 9 dropped 5–8.
    expect(await take(slow, 2)).toEqual([9, 10]);
    pubsub.publish('t', 11);
    expect(await take(slow, 1)).toEqual([11]);
    await slow.return!();
  });

  it('100 subscriptions on the shutdown signal hold one listener, warn nothing, and all end on abort', async () => {
    const pubsub = new PubSub();
    const shutdown = new AbortController();
    const subs = Array.from({ length: 100 }, () => pubsub.subscribe<number>('t', shutdown.signal));
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    const pending = subs.map((sub) => sub.next());
    shutdown.abort();
    for (const result of await Promise.all(pending)) expect(result.done).toBe(true);
    expect(pubsub.listenerCount('t')).toBe(0);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('the shared listener leaves the signal when the last subscription ends', async () => {
    const pubsub = new PubSub();
    const shutdown = new AbortController();
    const a = pubsub.subscribe('t', shutdown.signal);
    const b = pubsub.subscribe('u', shutdown.signal);
    await a.return!();
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    await b.return!();
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    // A subscription made after that registers it again.
    const c = pubsub.subscribe('t', shutdown.signal);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    shutdown.abort();
    expect(await c.next()).toEqual({ value: undefined, done: true });
  });

  it('a signal already aborted ends the subscription at once', async () => {
    const pubsub = new PubSub();
    const shutdown = new AbortController();
    shutdown.abort();
    const sub = pubsub.subscribe('t', shutdown.signal);
    expect(await sub.next()).toEqual({ value: undefined, done: true });
    expect(pubsub.listenerCount('t')).toBe(0);
  });
});
