// Request rate limits of a workspace's access to an integration (`requests` per minute, hour or
// day). Fixed windows aligned to the clock in UTC: a minute window starts at :00 seconds, an hour
// at :00 minutes, a day at 00:00 UTC; at most `value` requests are admitted per window, and the
// count starts again at the next window (a caller can thus burst up to 2 × value across a boundary).
//
// The counters live in the database (`rate_limit_counters`), changed by one atomic statement per
// check, so the limit is exact under concurrency and shared by every process using the database:
// no state in process memory, no read-modify-write in JavaScript.
import { RateLimitError } from '../../errors.js';
import { unixSeconds } from '../../lib/clock.js';
import type { Runtime } from '../../runtime.js';
import type { RateLimitUnit } from './limits.js';
import type { ResolvedProvider } from './provider-resolution.js';

export const WINDOW_MS: Readonly<Record<RateLimitUnit, number>> = Object.freeze({ rpm: 60_000, rph: 3_600_000, rpd: 86_400_000 });
const UNIT_WORDS: Readonly<Record<RateLimitUnit, string>> = Object.freeze({ rpm: 'minute', rph: 'hour', rpd: 'day' });

/** The window containing `now`: [start, end) in milliseconds since the epoch. */
export function rateWindow(unit: RateLimitUnit, now: Date): { start: number; end: number } {
  const size = WINDOW_MS[unit];
  const t = now.getTime();
  if (!Number.isFinite(t)) throw new RangeError('Invalid date for a rate-limit window');
  // The epoch is 00:00 UTC, so multiples of a minute, hour or day since it are aligned to the clock.
  const start = Math.floor(t / size) * size;
  return { start, end: start + size };
}

export interface RateLimitCheck {
  integrationId: string;
  workspaceId: string;
  unit: RateLimitUnit;
  /** Requests admitted per window (≥ 1). */
  value: number;
}

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  /** Requests still admitted in this window after this one. */
  remaining: number;
  /** When the window ends and the count starts again. */
  resetAt: Date;
  /** Seconds until a refused caller may try again (≥ 1); 0 when allowed. */
  retryAfterSeconds: number;
}

export function rateLimitKey(check: Pick<RateLimitCheck, 'integrationId' | 'workspaceId' | 'unit'>): string {
  // The unit is part of the key: changing rpm to rph starts a fresh count instead of reusing one.
  return `${check.integrationId}:${check.workspaceId}:${check.unit}`;
}

/**
 * Counts one request against the limit and says whether it is admitted. One statement does it:
 * the insert starts the window's counter at 1, or (when the row exists) the update adds 1 only
 * while the count is below the limit; `returning` yields a row exactly when the request counted.
 * SQLite takes the write lock at the start of a writing statement (WAL + busy_timeout make other
 * processes wait for it), so concurrent checks, in this process or another, serialise on it;
 * PostgreSQL's upsert locks the counter's row, and the update's condition is checked on the row
 * as the previous holder left it. (The column is qualified: PostgreSQL would find a bare `count`
 * ambiguous between the row and the proposed insert.)
 *
 * Call it outside any open transaction: this process has one SQLite connection, and a transaction
 * holding it would wait for this statement for ever.
 */
export async function checkRateLimit(runtime: Runtime, check: RateLimitCheck): Promise<RateLimitResult> {
  const now = runtime.clock.now();
  const { start, end } = rateWindow(check.unit, now);
  const key = rateLimitKey(check);
  // The driver's connection itself (what a fork would hand over too): no EntityManager is needed for raw statements.
  const connection = runtime.orm.em.getConnection();
  const rows = await connection.execute<Array<{ count: number }>>(
    `insert into rate_limit_counters ("key", window_start, count) values (?, ?, 1)
     on conflict ("key", window_start) do update set count = rate_limit_counters.count + 1 where rate_limit_counters.count < ?
     returning count`,
    [key, start, check.value],
    'all',
  );
  const counted = rows.length > 0 ? Number(rows[0].count) : null;
  if (counted === 1) {
    // The first request of a window: earlier windows of this key are over for good.
    await connection.execute(`delete from rate_limit_counters where "key" = ? and window_start < ?`, [key, start], 'run');
  }
  const resetAt = new Date(end);
  if (counted === null) {
    return { allowed: false, limit: check.value, remaining: 0, resetAt, retryAfterSeconds: Math.max(1, Math.ceil((end - now.getTime()) / 1000)) };
  }
  return { allowed: true, limit: check.value, remaining: Math.max(0, check.value - counted), resetAt, retryAfterSeconds: 0 };
}

/**
 * The response headers of a checked request: limit, remaining and reset (Unix seconds when the
 * window ends), plus `retry-after` (seconds) when it was refused.
 */
export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(result.limit),
    'x-ratelimit-remaining': String(result.remaining),
    'x-ratelimit-reset': String(unixSeconds(result.resetAt)),
  };
  if (!result.allowed) headers['retry-after'] = String(result.retryAfterSeconds);
  return headers;
}

/**
 * For the data plane: checks the resolved access's rate limit (if any) and returns the headers to
 * add to the response ({} without a limit); when the limit is reached, throws the 429 with them.
 */
export async function enforceRateLimit(runtime: Runtime, resolved: ResolvedProvider): Promise<Record<string, string>> {
  const limit = resolved.access.rateLimit;
  if (!limit) return {};
  const result = await checkRateLimit(runtime, {
    integrationId: resolved.integration.id,
    workspaceId: resolved.provider.workspaceId,
    unit: limit.unit,
    value: limit.value,
  });
  const headers = rateLimitHeaders(result);
  if (!result.allowed) {
    throw new RateLimitError(
      `Rate limit reached for integration '${resolved.integration.slug}' in this workspace: ${limit.value} requests per ${UNIT_WORDS[limit.unit]}. Retry after ${result.retryAfterSeconds} seconds.`,
      { headers },
    );
  }
  return headers;
}
