/**
 * A push-based stream with backpressure, for a source that many consumers follow at once (a
 * run's events). An async iterator costs each consumer several promises and a queue per item;
 * with 1,000 consumers of one source that, not the bytes, is where delivery time goes. A feed
 * hands each item to its sink in one call instead, and the sink says when it is full: the feed
 * then pushes nothing more until the sink calls `resume()`, so a slow consumer never grows a
 * queue (the feed catches it up from wherever its items are kept, e.g. an event log).
 *
 * Every feed is also an AsyncIterable (through a small bounded queue) for consumers that only
 * know iterators, such as a GraphQL executor.
 */
export interface FeedSink<T> {
  /** Takes one item; false when the sink is full: nothing more is pushed until `resume()`. */
  push(item: T): boolean;
  /** The feed ran to its end. */
  end(): void;
  fail(error: unknown): void;
}

export interface Feed<T> extends AsyncIterable<T> {
  /** Starts delivery to `sink` (once). */
  start(sink: FeedSink<T>): void;
  /** The sink has room again after a push answered false. */
  resume(): void;
  /** Stops delivery (the consumer went away); the sink hears nothing more. */
  stop(): void;
}

export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

export function isFeed<T>(source: AsyncIterable<T>): source is Feed<T> {
  const candidate = source as Partial<Feed<T>>;
  return typeof candidate.start === 'function' && typeof candidate.resume === 'function' && typeof candidate.stop === 'function';
}

/** Items a feed's iterator holds for a consumer that has not asked for them yet. */
const ITERATOR_QUEUE = 16;

/** The feed as an async iterator: it starts on the first `next()`, `return()` stops it. */
export function iterateFeed<T>(feed: Feed<T>): AsyncIterableIterator<T> {
  const queue: T[] = [];
  let started = false;
  let full = false;
  let finished = false;
  let failure: { error: unknown } | null = null;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const sink: FeedSink<T> = {
    push(item) {
      if (finished) return false;
      queue.push(item);
      poke();
      full = queue.length >= ITERATOR_QUEUE;
      return !full;
    },
    end() {
      finished = true;
      poke();
    },
    fail(error) {
      failure = { error };
      finished = true;
      poke();
    },
  };
  const iterator: AsyncIterableIterator<T> = {
    async next(): Promise<IteratorResult<T>> {
      if (!started) {
        started = true;
        feed.start(sink);
      }
      while (queue.length === 0 && !finished) await new Promise<void>((resolve) => (wake = resolve));
      if (queue.length > 0) {
        const value = queue.shift()!;
        if (full && queue.length === 0) {
          full = false;
          feed.resume();
        }
        return { value, done: false };
      }
      if (failure) {
        const { error } = failure;
        failure = null;
        throw error;
      }
      return { value: undefined, done: true };
    },
    async return(): Promise<IteratorResult<T>> {
      if (!finished) {
        finished = true;
        feed.stop();
      }
      queue.length = 0;
      poke();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/** `fn` applied to each item, in the pushing call (no promise per item). */
export function mapFeed<T, U>(feed: Feed<T>, fn: (item: T) => U): Feed<U> {
  const mapped: Feed<U> = {
    start: (sink) => feed.start({ push: (item) => sink.push(fn(item)), end: () => sink.end(), fail: (error) => sink.fail(error) }),
    resume: () => feed.resume(),
    stop: () => feed.stop(),
    [Symbol.asyncIterator]: () => iterateFeed(mapped),
  };
  return mapped;
}

/**
 * Any async iterable as a feed: it is read one item at a time, and not while the sink is full.
 * The iterator is taken at once, so `stop()` returns it even if the feed never started.
 */
export function feedOf<T>(source: AsyncIterable<T>): Feed<T> {
  if (isFeed(source)) return source;
  const iterator = source[Symbol.asyncIterator]();
  let stopped = false;
  let waiting: (() => void) | null = null;
  const feed: Feed<T> = {
    start(sink) {
      void (async () => {
        try {
          for (;;) {
            const next = await iterator.next();
            if (stopped) return;
            if (next.done) return sink.end();
            if (!sink.push(next.value)) await new Promise<void>((resolve) => (waiting = resolve));
            if (stopped) return;
          }
        } catch (error) {
          if (!stopped) sink.fail(error);
        }
      })();
    },
    resume() {
      const w = waiting;
      waiting = null;
      w?.();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      feed.resume();
      void iterator.return?.();
    },
    [Symbol.asyncIterator]: () => iterateFeed(feed),
  };
  return feed;
}
