import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CLAIM_TIMEOUT_MS, ChunkStream, claimStream, registerStream } from '../../../src/modules/chat/chat-streams.js';
import type { Runtime } from '../../../src/runtime.js';

// The registry between a streamed chat completion and its reader: claimed once, by the API key
// that started it, dropped unclaimed after CLAIM_TIMEOUT_MS, and not held once claimed.
function fakeRuntime(): Runtime {
  const singletons = new Map<string, unknown>();
  return {
    singleton<T>(key: string, create: () => T): T {
      if (!singletons.has(key)) singletons.set(key, create());
      return singletons.get(key) as T;
    },
  } as Runtime;
}

describe('chat streams registry', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('is claimed once, by its own API key, and its drop timer goes with the claim', () => {
    const runtime = fakeRuntime();
    const stream = new ChunkStream('key-1');
    registerStream(runtime, 's1', stream);
    expect(vi.getTimerCount()).toBe(1);
    expect(claimStream(runtime, 's1', 'key-2')).toBeNull();
    expect(claimStream(runtime, 's1', 'key-1')).toBe(stream);
    expect(vi.getTimerCount()).toBe(0);
    expect(claimStream(runtime, 's1', 'key-1')).toBeNull();
  });

  it('is dropped (and its chunks discarded) when nobody claims it in time', async () => {
    const runtime = fakeRuntime();
    const stream = new ChunkStream('key-1');
    registerStream(runtime, 's2', stream);
    vi.advanceTimersByTime(CLAIM_TIMEOUT_MS);
    expect(claimStream(runtime, 's2', 'key-1')).toBeNull();
    stream.push({ id: 'chunk' });
    stream.end();
    const read: unknown[] = [];
    for await (const chunk of stream.chunks()) read.push(chunk);
    expect(read).toEqual([]);
  });
});
