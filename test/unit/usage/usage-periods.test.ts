import { describe, expect, it } from 'vitest';
import { currentPeriod, isPeriodicReset, nextReset, periodKey, periodStart } from '../../../src/modules/usage/usage-periods.js';
import type { PeriodicReset } from '../../../src/modules/usage/usage-periods.js';

const d = (iso: string): Date => new Date(iso);
const iso = (x: Date | null): string | null => (x === null ? null : x.toISOString());

describe('monthly periods', () => {
  it.each([
    ['2026-11-17T13:45:12.345Z', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', '2026-11'],
    ['2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', '2026-11'], // exact boundary
    ['2026-10-31T23:59:59.999Z', '2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z', '2026-10'], // last ms before
    ['2026-12-31T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', '2026-12'], // year end
    ['2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', '2027-02-01T00:00:00.000Z', '2027-01'],
    ['2028-02-29T12:00:00.000Z', '2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z', '2028-02'], // leap day
    ['2027-02-28T23:59:59.999Z', '2027-02-01T00:00:00.000Z', '2027-03-01T00:00:00.000Z', '2027-02'],
    ['2026-01-31T10:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-01'],
  ])('%s → start %s, next %s, key %s', (now, start, next, key) => {
    expect(iso(periodStart('monthly', d(now)))).toBe(start);
    expect(iso(nextReset('monthly', d(now)))).toBe(next);
    expect(periodKey('monthly', d(now))).toBe(key);
  });

  it('uses UTC, not the local offset of the instant', () => {
    // 23:30 on Oct 31 in New York is already Nov 1 in UTC.
    expect(periodKey('monthly', d('2026-10-31T23:30:00-04:00'))).toBe('2026-11');
  });
});

describe('weekly periods (Monday 00:00 UTC)', () => {
  it.each([
    // 2026-11-23 is a Monday
    ['2026-11-25T08:00:00.000Z', '2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z', '2026-W48'], // Wednesday
    ['2026-11-23T00:00:00.000Z', '2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z', '2026-W48'], // exact Monday start
    ['2026-11-22T23:59:59.999Z', '2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z', '2026-W47'], // Sunday, last ms
    ['2026-11-29T23:59:59.999Z', '2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z', '2026-W48'],
    // week across a month end: Monday 2026-08-31 → Sunday 2026-09-06
    ['2026-09-02T12:00:00.000Z', '2026-08-31T00:00:00.000Z', '2026-09-07T00:00:00.000Z', '2026-W36'],
    // Dec 31 2024 (Tue) and Jan 1 2025 (Wed) share ISO week 2025-W01, starting Mon 2024-12-30
    ['2024-12-31T23:59:59.999Z', '2024-12-30T00:00:00.000Z', '2025-01-06T00:00:00.000Z', '2025-W01'],
    ['2025-01-01T00:00:00.000Z', '2024-12-30T00:00:00.000Z', '2025-01-06T00:00:00.000Z', '2025-W01'],
    // Fri 2021-01-01 belongs to the last ISO week of 2020 (a 53-week year)
    ['2021-01-01T00:00:00.000Z', '2020-12-28T00:00:00.000Z', '2021-01-04T00:00:00.000Z', '2020-W53'],
    ['2021-01-03T23:59:59.999Z', '2020-12-28T00:00:00.000Z', '2021-01-04T00:00:00.000Z', '2020-W53'],
    ['2021-01-04T00:00:00.000Z', '2021-01-04T00:00:00.000Z', '2021-01-11T00:00:00.000Z', '2021-W01'],
    // leap February: Mon 2028-02-28 → Mon 2028-03-06 includes the 29th
    ['2028-02-29T06:00:00.000Z', '2028-02-28T00:00:00.000Z', '2028-03-06T00:00:00.000Z', '2028-W09'],
  ])('%s → start %s, next %s, key %s', (now, start, next, key) => {
    expect(iso(periodStart('weekly', d(now)))).toBe(start);
    expect(iso(nextReset('weekly', d(now)))).toBe(next);
    expect(periodKey('weekly', d(now))).toBe(key);
  });

  it('gives every day of a week the same key and the next Monday a new one', () => {
    const monday = Date.UTC(2026, 11, 28); // Mon 2026-12-28, a week spanning the year end
    const keys = new Set(Array.from({ length: 7 }, (_, i) => periodKey('weekly', new Date(monday + i * 86_400_000 + 3_600_000))));
    expect([...keys]).toEqual(['2026-W53']);
    expect(periodKey('weekly', new Date(monday + 7 * 86_400_000))).toBe('2027-W01');
  });

  it('never repeats a key across consecutive weeks for several years', () => {
    const keys: string[] = [];
    for (let t = Date.UTC(2019, 11, 30); t < Date.UTC(2030, 0, 7); t += 7 * 86_400_000) keys.push(periodKey('weekly', new Date(t)));
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.filter((k) => k.endsWith('-W53'))).toEqual(['2020-W53', '2026-W53']);
  });
});

describe('never-resetting periods (null)', () => {
  it('is one period from the epoch with no next reset', () => {
    for (const now of ['1999-12-31T23:59:59.999Z', '2026-11-01T00:00:00.000Z']) {
      expect(iso(periodStart(null, d(now)))).toBe('1970-01-01T00:00:00.000Z');
      expect(nextReset(null, d(now))).toBeNull();
      expect(periodKey(null, d(now))).toBe('all');
    }
  });
});

describe('currentPeriod and helpers', () => {
  it('bundles key, start and end', () => {
    expect(currentPeriod('monthly', d('2026-12-31T12:00:00Z'))).toEqual({
      key: '2026-12',
      start: d('2026-12-01T00:00:00Z'),
      end: d('2027-01-01T00:00:00Z'),
    });
    expect(currentPeriod(null, d('2026-12-31T12:00:00Z'))).toEqual({ key: 'all', start: new Date(0), end: null });
  });

  it('keeps key formats distinct per reset kind', () => {
    const now = d('2026-11-23T00:00:00Z');
    const keys = (['monthly', 'weekly', null] as PeriodicReset[]).map((r) => periodKey(r, now));
    expect(new Set(keys).size).toBe(3);
  });

  it('does not mutate the input date', () => {
    const now = d('2026-11-25T08:00:00Z');
    periodStart('weekly', now);
    nextReset('monthly', now);
    expect(now.toISOString()).toBe('2026-11-25T08:00:00.000Z');
  });

  it('rejects an invalid date instead of producing a NaN key', () => {
    expect(() => periodKey('monthly', new Date('nope'))).toThrow(RangeError);
    expect(() => periodStart(null, new Date(Number.NaN))).toThrow(RangeError);
  });

  it('recognises the wire values of periodic_reset', () => {
    expect([null, 'monthly', 'weekly'].every(isPeriodicReset)).toBe(true);
    expect(['daily', 'Monthly', undefined, ''].some(isPeriodicReset)).toBe(false);
  });
});
