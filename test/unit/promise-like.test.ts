import { expect, it } from 'vitest';
import { isPromiseLike } from '../../src/lib/promise-like.js';

it('tells what await would wait for: promises and thenables, not plain values', () => {
  expect(isPromiseLike(Promise.resolve(1))).toBe(true);
  expect(isPromiseLike({ then: () => undefined })).toBe(true);
  expect(isPromiseLike(Object.assign(() => undefined, { then: () => undefined }))).toBe(true);
  for (const value of [null, undefined, 0, 'then', {}, { then: 1 }, [], () => undefined]) expect(isPromiseLike(value), String(value)).toBe(false);
});
