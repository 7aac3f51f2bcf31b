/**
 * In-process publish/subscribe for live GraphQL subscriptions and SSE streams. Payloads are plain
 * snapshots (never managed entities). A subscription ends when its consumer stops iterating or
 * when the given signal aborts (shutdown), so open streams close cleanly.
 */
export class PubSub {
  private readonly listeners = new Map<string, Set<(payload: unknown) => void>>();

  publish(topic: string, payload: unknown): void {
    for (const listener of this.listeners.get(topic) ?? []) listener(payload);
  }

  listenerCount(topic: string): number {
    return this.listeners.get(topic)?.size ?? 0;
  }

  subscribe<T>(topic: string, signal?: AbortSignal): AsyncIterableIterator<T> {
    const queue: T[] = [];
    let wake: (() => void) | null = null;
    let done = false;
    const listener = (payload: unknown) => {
      queue.push(payload as T);
      wake?.();
    };
    const finish = () => {
      if (done) return;
      done = true;
      this.listeners.get(topic)?.delete(listener);
      if (this.listeners.get(topic)?.size === 0) this.listeners.delete(topic);
      wake?.();
    };
    if (!this.listeners.has(topic)) this.listeners.set(topic, new Set());
    this.listeners.get(topic)!.add(listener);
    if (signal?.aborted) finish();
    signal?.addEventListener('abort', finish, { once: true });

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
        signal?.removeEventListener('abort', finish);
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }
}
