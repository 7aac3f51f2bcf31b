import { expect, it } from 'vitest';
import { StoredTime } from '../../../src/modules/collections/collection-loaders.js';

/*
 * A collection's times are written by StoredTime's own toISOString (collection-loaders.ts): its
 * text must be Date's, for every time.
 */

const dateText = (ms: number): string => Date.prototype.toISOString.call(new Date(ms));

function check(ms: number): void {
  expect(new StoredTime(ms).toISOString(), `${ms}`).toBe(dateText(ms));
}

it('writes the text Date writes around the edges of years, months and days', () => {
  const years = [0, 1, 99, 100, 400, 999, 1000, 1582, 1899, 1900, 1969, 1970, 1999, 2000, 2024, 2026, 2100, 2400, 9999];
  for (const year of years) {
    for (const month of [0, 1, 2, 11]) {
      for (const day of [1, 28, 29, 30, 31]) {
        const start = new Date(0);
        start.setUTCFullYear(year, month, day);
        start.setUTCHours(0, 0, 0, 0);
        for (const offset of [-1, 0, 1, 999, 1000, 59_999, 3_599_999, 43_200_123, 86_399_999]) check(start.getTime() + offset);
      }
    }
  }
  check(0);
  check(-1);
  check(Date.UTC(2026, 10, 29, 6, 31, 18, 303));
});

it('writes the text Date writes for random times of years 0000 to 9999', () => {
  const first = -62_167_219_200_000;
  const last = 253_402_300_799_999;
  let seed = 11;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 20_000; i++) check(Math.floor(first + next() * (last - first)));
  check(first);
  check(last);
});

it('leaves times outside years 0000 to 9999, and an invalid one, to Date', () => {
  for (const ms of [-62_167_219_200_001, 253_402_300_800_000, 8.64e15, -8.64e15]) check(ms);
  expect(() => new StoredTime(Number.NaN).toISOString()).toThrow(RangeError);
});

it('is a Date: the same time, JSON and comparisons', () => {
  const ms = Date.UTC(2026, 10, 29, 6, 31, 18, 303);
  const time = new StoredTime(ms);
  expect(time).toBeInstanceOf(Date);
  expect(time.getTime()).toBe(ms);
  expect(JSON.stringify({ time })).toBe(JSON.stringify({ time: new Date(ms) }));
  expect(new StoredTime('2026-11-29T06:31:18.303+00:00').getTime()).toBe(ms);
});
