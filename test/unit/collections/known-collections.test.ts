import { describe, expect, it } from 'vitest';
import type { CollectionRead } from '../../../src/modules/collections/collection-loaders.js';
import { KnownCollections } from '../../../src/modules/collections/known-collections.js';

const collection = (id: string, name = id) => ({ id, name }) as unknown as CollectionRead;

describe('KnownCollections', () => {
  it('finds a collection of any list given, including lists given after a lookup', () => {
    const known = new KnownCollections();
    const level = [collection('a'), collection('b')];
    known.add(level);
    expect(known.get('b')).toBe(level[1]);
    expect(known.get('c')).toBeUndefined();
    const later = [collection('c')];
    known.add(later);
    expect(known.get('c')).toBe(later[0]);
    expect(known.get('a')).toBe(level[0]);
  });

  it('keeps the first collection given for an id, as a dataloader’s prime does', () => {
    const known = new KnownCollections();
    const first = collection('a', 'first');
    known.add([first]);
    known.add([collection('a', 'second')]);
    expect(known.get('a')).toBe(first);
  });

  it('knows nothing it was not given', () => {
    const known = new KnownCollections();
    known.add([]);
    expect(known.get('a')).toBeUndefined();
  });
});
