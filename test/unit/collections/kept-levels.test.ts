import { describe, expect, it } from 'vitest';
import { KEPT_LEVELS_CHILDREN, KeptLevels, keptLevelsOf, type CollectionRead } from '../../../src/modules/collections/collection-loaders.js';

/*
 * The levels childCollectionsOf keeps (collection-loaders.ts, KeptLevels): up to
 * KEPT_LEVELS_CHILDREN children in all, an empty level counting as one, the least recently read
 * dropped first, one set per runtime.
 */

const level = (children: number) => Object.freeze(new Array(children).fill(null)) as unknown as readonly CollectionRead[];

describe('KeptLevels', () => {
  it('keeps levels up to the bound, dropping the least recently read first', () => {
    const kept = new KeptLevels();
    kept.keep('a', 'v a', level(KEPT_LEVELS_CHILDREN / 2));
    kept.keep('b', 'v b', level(KEPT_LEVELS_CHILDREN / 2 - 1));
    kept.keep('empty', 'v e', level(0));
    expect(kept.children).toBe(KEPT_LEVELS_CHILDREN);
    // Read again: now the most recently read.
    expect(kept.stillCurrent('a', kept.levels.get('a')!)).toHaveLength(KEPT_LEVELS_CHILDREN / 2);
    kept.keep('c', 'v c', level(1));
    expect([...kept.levels.keys()]).toEqual(['empty', 'a', 'c']);
    expect(kept.children).toBe(1 + KEPT_LEVELS_CHILDREN / 2 + 1);
  });

  it('a level found current gives the children asked about, even when dropped or replaced since', () => {
    const kept = new KeptLevels();
    kept.keep('p', 'v 1', level(2));
    const asked = kept.levels.get('p')!;
    kept.forget('p');
    expect(kept.stillCurrent('p', asked)).toBe(asked.children);
    expect(kept.levels.has('p')).toBe(false);
    kept.keep('p', 'v 2', level(3));
    const replacement = kept.levels.get('p')!;
    kept.keep('q', 'v q', level(1));
    expect(kept.stillCurrent('p', asked)).toBe(asked.children);
    // The replacement stays kept, and its place in the order too.
    expect(kept.levels.get('p')).toBe(replacement);
    expect([...kept.levels.keys()]).toEqual(['p', 'q']);
    expect(kept.children).toBe(4);
  });

  it('does not keep a level over the bound, and forgets the one it replaces', () => {
    const kept = new KeptLevels();
    kept.keep('small', 'v s', level(3));
    kept.keep('big', 'v 1', level(10));
    kept.keep('big', 'v 2', level(KEPT_LEVELS_CHILDREN + 1));
    expect([...kept.levels.keys()]).toEqual(['small']);
    expect(kept.children).toBe(3);
    kept.keep('whole', 'v w', level(KEPT_LEVELS_CHILDREN));
    expect([...kept.levels.keys()]).toEqual(['whole']);
    expect(kept.children).toBe(KEPT_LEVELS_CHILDREN);
  });

  it('replacing a level counts its new children only; forgetting one gives its children back', () => {
    const kept = new KeptLevels();
    kept.keep('p', 'v 1', level(5));
    kept.keep('p', 'v 2', level(7));
    expect(kept.levels.get('p')?.keptAs).toBe('v 2');
    expect(kept.children).toBe(7);
    kept.forget('p');
    kept.forget('p');
    expect(kept.children).toBe(0);
    expect(kept.levels.size).toBe(0);
  });

  it('one set per runtime', () => {
    const runtime = () => {
      const singletons = new Map<string, unknown>();
      return { singleton: <T>(key: string, create: () => T): T => (singletons.has(key) ? (singletons.get(key) as T) : (singletons.set(key, create()), singletons.get(key) as T)) };
    };
    const one = runtime();
    expect(keptLevelsOf(one)).toBe(keptLevelsOf(one));
    expect(keptLevelsOf(one)).not.toBe(keptLevelsOf(runtime()));
  });
});
