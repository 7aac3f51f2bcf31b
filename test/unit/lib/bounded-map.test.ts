import { expect, it } from 'vitest';
import { setBounded } from '../../../src/lib/bounded-map.js';

it('a new key beyond the limit drops the oldest entry', () => {
  const map = new Map<string, number>();
  for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) setBounded(map, key, i, 3);
  expect([...map]).toEqual([['b', 1], ['c', 2], ['d', 3]]);
});

it('a key already held is replaced in place and drops nothing', () => {
  const map = new Map([['a', 0], ['b', 1], ['c', 2]]);
  setBounded(map, 'a', 9, 3);
  expect([...map]).toEqual([['a', 9], ['b', 1], ['c', 2]]);
});
