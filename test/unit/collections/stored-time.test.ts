import { afterEach, expect, it, vi } from 'vitest';
import { StoredTime } from '../../../src/modules/collections/collection-loaders.js';

/*
 * A collection's times keep the ISO text they wrote (StoredTime, collection-loaders.ts): a kept
 * level is written on every read, its times printed once. The text must always be Date's own, for
 * the time the Date holds when asked.
 */

afterEach(() => vi.restoreAllMocks());

const dateText = (ms: number): string => Date.prototype.toISOString.call(new Date(ms));

it('writes the text Date writes', () => {
  for (const ms of [0, -1, Date.UTC(2026, 10, 29, 6, 31, 18, 303), -62_167_219_200_000, 253_402_300_799_999, 8.64e15, -8.64e15]) {
    expect(new StoredTime(ms).toISOString(), `${ms}`).toBe(dateText(ms));
  }
  expect(() => new StoredTime(Number.NaN).toISOString()).toThrow(RangeError);
});

it('prints a time once, however often it is written', () => {
  const time = new StoredTime(Date.UTC(2026, 10, 29, 6, 31, 18, 303));
  const print = vi.spyOn(Date.prototype, 'toISOString');
  for (let i = 0; i < 3; i++) expect(time.toISOString()).toBe('2026-11-29T06:31:18.303Z');
  expect(JSON.stringify({ time })).toBe('{"time":"2026-11-29T06:31:18.303Z"}');
  expect(print).toHaveBeenCalledTimes(1);
});

it('writes its new time once changed', () => {
  const time = new StoredTime(Date.UTC(2026, 10, 29, 6, 31, 18, 303));
  expect(time.toISOString()).toBe('2026-11-29T06:31:18.303Z');
  time.setTime(Date.UTC(2027, 0, 1));
  expect(time.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  time.setTime(Number.NaN);
  expect(() => time.toISOString()).toThrow(RangeError);
});

it('is a Date: the same time, JSON and comparisons', () => {
  const ms = Date.UTC(2026, 10, 29, 6, 31, 18, 303);
  const time = new StoredTime(ms);
  expect(time).toBeInstanceOf(Date);
  expect(time.getTime()).toBe(ms);
  expect(JSON.stringify({ time })).toBe(JSON.stringify({ time: new Date(ms) }));
  expect(new StoredTime('2026-11-29T06:31:18.303+00:00').getTime()).toBe(ms);
});
