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
 * Publish/subscribe for live GraphQL subscriptions and SSE streams, across instances when a bus
 * links them (see `Bus`). Payloads are plain snapshots (never managed entities), delivered in
 * process by reference: every subscriber of a topic sees the same object, so what is derived from it (an SSE frame) can be computed once per payload.
 * Each subscription's queue is bounded, so a consumer that stops reading cannot grow the heap.
 * A subscription ends when its consumer stops iterating or when the given signal aborts
 * (shutdown), so open streams close cleanly; all subscriptions share one listener on the signal.
 */
interface Subscriber {
  deliver(payload: unknown): void;
  queued(): number;
}

/**
 * Delivered in this process (payload null) when the bus is connected again after losing its
 * connection: what other instances published meanwhile never arrived, so state kept from their
 * messages (caches invalidated by them) must start afresh.
 */
export const BUS_RECONNECTED_TOPIC = 'bus.reconnected';

/**
 * Carries publications to the other instances on the database and back (src/lib/pg-bus.ts on
 * PostgreSQL). Without one (SQLite) publications stay in this process: SQLite is one process per
 * database file, so there is nobody else to tell. A bus hands back only what other instances
 * sent; this process's own publications are delivered in process, at once and by reference.
 */
export interface Bus {
  send(topic: string, payload: unknown): void;
  onMessage(handler: (topic: string, payload: unknown) => void): void;
}

export class PubSub {
  private readonly listeners = new Map<string, Set<Subscriber>>();

  constructor(private readonly bus?: Bus) {
    bus?.onMessage((topic, payload) => this.deliver(topic, payload));
  }

  /** Publications reach other instances (a bus links them). */
  get crossesInstances(): boolean {
    return this.bus !== undefined;
  }

  /** Delivers to this process's subscribers and, through the bus, to every other instance's. */
  publish(topic: string, payload: unknown): void {
    this.deliver(topic, payload);
    this.bus?.send(topic, payload);
  }

  /**
   * Calls `handler` with every payload of `topic` (this process's and other instances'), for
   * in-process bookkeeping such as cache invalidation; returns the unsubscribe function.
   */
  on(topic: string, handler: (payload: unknown) => void): () => void {
    const subscriber: Subscriber = { deliver: handler, queued: () => 0 };
    if (!this.listeners.has(topic)) this.listeners.set(topic, new Set());
    this.listeners.get(topic)!.add(subscriber);
    return () => {
      const set = this.listeners.get(topic);
      set?.delete(subscriber);
      if (set?.size === 0) this.listeners.delete(topic);
    };
  }

  private deliver(topic: string, payload: unknown): void {
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
