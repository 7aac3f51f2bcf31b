// Usage periods are derived from the clock, never advanced by a job: the bucket for a request is
// keyed by the period containing `now`, so a restart (or a stopped scheduler) cannot skip a reset —
// the first request of a new period simply finds no bucket for the new key and starts from zero.
// All arithmetic is UTC; Date.UTC normalises overflowing days/months (Dec + 1 → Jan of next year).

export const PERIODIC_RESETS = ['monthly', 'weekly'] as const;
export type PeriodicReset = (typeof PERIODIC_RESETS)[number] | null;

export interface Period {
  /** Bucket key part: `2026-11` (monthly), `2026-W48` (weekly, ISO week-year), `all` (never resets). */
  key: string;
  start: Date;
  /** Start of the next period (exclusive end); null when the period never ends. */
  end: Date | null;
}

const DAY_MS = 86_400_000;

/** True for the wire values of `periodic_reset` (`null` meaning "never"). */
export function isPeriodicReset(value: unknown): value is PeriodicReset {
  return value === null || (PERIODIC_RESETS as readonly unknown[]).includes(value);
}

function assertValidDate(now: Date): void {
  // An Invalid Date would yield a `NaN-NaN` key and silently create a bucket nobody reads again.
  if (Number.isNaN(now.getTime())) throw new RangeError('Invalid date for usage period');
}

export function periodStart(reset: PeriodicReset, now: Date): Date {
  assertValidDate(now);
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  if (reset === 'monthly') return new Date(Date.UTC(y, m, 1));
  if (reset === 'weekly') {
    const sinceMonday = (now.getUTCDay() + 6) % 7; // getUTCDay: Sunday 0 … Saturday 6
    return new Date(Date.UTC(y, m, now.getUTCDate() - sinceMonday));
  }
  // One period from the epoch for ever: a fixed start keeps the key stable across restarts.
  return new Date(0);
}

export function nextReset(reset: PeriodicReset, now: Date): Date | null {
  const start = periodStart(reset, now);
  if (reset === 'monthly') return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  // UTC has no DST, so a week is always exactly seven days.
  if (reset === 'weekly') return new Date(start.getTime() + 7 * DAY_MS);
  return null;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/**
 * The ISO 8601 week label of a Monday-started week. The week belongs to the year of its Thursday,
 * so Monday 2024-12-30 is `2025-W01` and Friday 2021-01-01 is in `2020-W53`; using the calendar
 * year instead would give the last days of December and the first of January two different keys
 * for the same week, i.e. a spurious reset mid-week.
 */
function isoWeekKey(monday: Date): string {
  const thursday = new Date(monday.getTime() + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1;
  return `${pad(year, 4)}-W${pad(week, 2)}`;
}

/**
 * Key of the period containing `now`. Formats differ per reset kind, so changing a policy's
 * `periodic_reset` starts a fresh bucket instead of reusing one counted under another rule.
 */
export function periodKey(reset: PeriodicReset, now: Date): string {
  const start = periodStart(reset, now);
  if (reset === 'monthly') return `${pad(start.getUTCFullYear(), 4)}-${pad(start.getUTCMonth() + 1, 2)}`;
  if (reset === 'weekly') return isoWeekKey(start);
  return 'all';
}

export function currentPeriod(reset: PeriodicReset, now: Date): Period {
  return { key: periodKey(reset, now), start: periodStart(reset, now), end: nextReset(reset, now) };
}
