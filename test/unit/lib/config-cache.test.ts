import { describe, expect, it } from 'vitest';
import { ConfigCache } from '../../../src/lib/config-cache.js';

describe('ConfigCache', () => {
  it('loads once per key, shares a load in flight, and loads again after an invalidation', async () => {
    const cache = new ConfigCache();
    let loads = 0;
    const load = async () => ++loads;
    const [a, b] = await Promise.all([cache.get('providers', 'k', load), cache.get('providers', 'k', load)]);
    expect([a, b, loads]).toEqual([1, 1, 1]);
    expect(await cache.get('providers', 'other', load)).toBe(2);
    cache.invalidate('providers');
    expect(await cache.get('providers', 'k', load)).toBe(3);
    expect(await cache.get('providers', 'k', load)).toBe(3);
  });

  it('keeps neither a failed load nor one an invalidation overtook', async () => {
    const cache = new ConfigCache();
    await expect(cache.get('providers', 'k', () => Promise.reject(new Error('no such key')))).rejects.toThrow('no such key');
    expect(await cache.get('providers', 'k', async () => 'found')).toBe('found');

    cache.invalidate('providers');
    let finish!: (value: string) => void;
    const before = cache.get('providers', 'k', () => new Promise<string>((resolve) => (finish = resolve)));
    cache.invalidate('providers'); // a write lands while the load reads the old state
    finish('old');
    expect(await before).toBe('old');
    expect(await cache.get('providers', 'k', async () => 'new')).toBe('new');
  });

  it('tells listeners about local invalidations only', () => {
    const cache = new ConfigCache();
    const seen: string[] = [];
    const stop = cache.onInvalidate((scope) => seen.push(scope));
    cache.invalidate('providers');
    cache.invalidate('providers', { remote: true });
    stop();
    cache.invalidate('providers');
    expect(seen).toEqual(['providers']);
  });
});

describe('ConfigCache.sync', () => {
  it('drops everything when the database version moved (another process committed), not before', async () => {
    const cache = new ConfigCache();
    let loads = 0;
    const load = async () => ++loads;
    cache.sync(7);
    await cache.get('providers', 'k', load);
    cache.sync(7);
    expect(await cache.get('providers', 'k', load)).toBe(1);
    cache.sync(8);
    expect(await cache.get('providers', 'k', load)).toBe(2);
  });
});

describe('ConfigCache.syncWith', () => {
  it('asks the data version once per EntityManager', async () => {
    const cache = new ConfigCache();
    let asked = 0;
    const em = (version: () => number) =>
      ({
        isInTransaction: () => false,
        getConnection: () => ({ execute: async () => (asked++, { data_version: version() }) }),
      }) as unknown as Parameters<ConfigCache['syncWith']>[0];
    let version = 1;
    const request = em(() => version);
    await cache.syncWith(request);
    await cache.get('providers', 'k', async () => 'v1');
    version = 2; // another process commits: the same request goes on with what it read
    await cache.syncWith(request);
    expect([asked, await cache.get('providers', 'k', async () => 'v2')]).toEqual([1, 'v1']);
    await cache.syncWith(em(() => version)); // the next request sees the commit
    expect([asked, await cache.get('providers', 'k', async () => 'v2')]).toEqual([2, 'v2']);
  });

  it('reads that start together share one question, and a failed question is asked again', async () => {
    const cache = new ConfigCache();
    let asked = 0;
    let fail = true;
    const request = {
      isInTransaction: () => false,
      getConnection: () => ({
        execute: async () => {
          asked++;
          if (fail) throw new Error('busy');
          return { data_version: 1 };
        },
      }),
    } as unknown as Parameters<ConfigCache['syncWith']>[0];
    await expect(Promise.all([cache.syncWith(request), cache.syncWith(request)])).rejects.toThrow('busy');
    expect(asked).toBe(1);
    fail = false;
    await Promise.all([cache.syncWith(request), cache.syncWith(request)]);
    await cache.syncWith(request);
    expect(asked).toBe(2);
  });
});

describe('ConfigCache bound', () => {
  it('keeps at most 10,000 entries per scope, dropping the oldest', async () => {
    const cache = new ConfigCache();
    for (let i = 0; i <= 10_000; i++) await cache.get('policies', `k${i}`, async () => i);
    expect(await cache.get('policies', 'k10000', async () => -1)).toBe(10_000);
    expect(await cache.get('policies', 'k0', async () => -1)).toBe(-1);
  });
});
