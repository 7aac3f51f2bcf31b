import { onAbort } from './on-abort.js';

/** How many undelivered payloads a subscription may hold before its consumer counts as stalled. */
export const DEFAULT_QUEUE_LIMIT = 1024;

export interface SubscribeOptions {
  /** At most this many payloads wait for a slow consumer (default DEFAULT_QUEUE_LIMIT). */
  limit?: number;
  /**
   * What a full queue does with the next payload. `end` (default): the subscription ends after
   * what it holds, so the client sees its stream close and can resubscribe. `discard`: the
   * backlog is dropped and delivery goes on with the newest payload — for topics whose payloads
   * carry a sequence the consumer can fill a gap from (a run's event log).
   */
  overflow?: 'end' | 'discard';
}

/**
 * In-process publish/subscribe for live GraphQL subscriptions and SSE streams. Payloads are plain
 * snapshots (never managed entities), delivered by reference: every subscriber of a topic sees
 * the same object, so what is derived from it (an SSE frame) can be computed once per payload.
 * Each subscription's queue is bounded, so a consumer that stops reading cannot grow the heap.
 * A subscription ends when its consumer stops iterating or when the given signal aborts
 * (shutdown), so open streams close cleanly; all subscriptions share one listener on the signal.
 */
interface Subscriber {
  deliver(payload: unknown): void;
  queued(): number;
}

export class PubSub {
  private readonly listeners = new Map<string, Set<Subscriber>>();

  publish(topic: string, payload: unknown): void {
    const set = this.listeners.get(topic);
    if (set) for (const subscriber of set) subscriber.deliver(payload);
  }

  listenerCount(topic: string): number {
    return this.listeners.get(topic)?.size ?? 0;
  }

  /** The longest queue of undelivered payloads among the topic's subscribers (for tests and probes). */
  maxQueued(topic: string): number {
    let max = 0;
    for (const subscriber of this.listeners.get(topic) ?? []) max = Math.max(max, subscriber.queued());
    return max;
  }

  subscribe<T>(topic: string, signal?: AbortSignal, options: SubscribeOptions = {}): AsyncIterableIterator<T> {
    const limit = options.limit ?? DEFAULT_QUEUE_LIMIT;
    const discard = options.overflow === 'discard';
    let queue: T[] = [];
    let wake: (() => void) | null = null;
    let done = false;
    let unlisten = () => {};
    const listener: Subscriber = {
      deliver(payload) {
        if (queue.length >= limit) {
          if (!discard) return finish();
          queue = [];
        }
        queue.push(payload as T);
        wake?.();
      },
      queued: () => queue.length,
    };
    const finish = () => {
      if (done) return;
      done = true;
      const set = this.listeners.get(topic);
      set?.delete(listener);
      if (set?.size === 0) this.listeners.delete(topic);
      unlisten();
      wake?.();
    };
    if (!this.listeners.has(topic)) this.listeners.set(topic, new Set());
    this.listeners.get(topic)!.add(listener);
    if (signal?.aborted) finish();
    else if (signal) unlisten = onAbort(signal, finish);

    const iterator: AsyncIterableIterator<T> = {
      async next(): Promise<IteratorResult<T>> {
        while (queue.length === 0 && !done) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
        }
        if (queue.length > 0) return { value: queue.shift()!, done: false };
        return { value: undefined, done: true };
      },
      async return(): Promise<IteratorResult<T>> {
        finish();
        queue = [];
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }
}
