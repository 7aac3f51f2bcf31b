import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RateLimitError } from '../../src/errors.js';
import { ManualClock } from '../../src/lib/clock.js';
import { resolveProvider, type ResolvedProvider } from '../../src/modules/integrations/provider-resolution.js';
import { checkRateLimit, enforceRateLimit, rateLimitHeaders, type RateLimitResult } from '../../src/modules/integrations/rate-limiter.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';

// The rate limiter is exact under concurrency and shared by processes: two app instances (two
// SQLite connections, as two processes would have) on one database file.

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-rate-'));
const env = { DATABASE_URL: `sqlite:${join(dir, 'gatehouse.sqlite')}` };
const clock = new ManualClock(new Date('2026-11-22T10:00:30.000Z'));

let first: TestApp;
let second: TestApp;
let defaultId: string;

const resolveIn = (t: TestApp): Promise<ResolvedProvider> => resolveProvider(t.app.runtime.fork(), t.app.runtime, defaultId, 'local');

/**
 * `check` of a change made through the first instance, as the second sees it: on SQLite at once
 * (the file's data version), on PostgreSQL once the invalidation has come over the bus, within
 * milliseconds (the promise is one second; a loaded CI pass once read before it came).
 */
const seenBySecond = <T>(check: () => Promise<T>): Promise<T> => (onPostgres ? vi.waitFor(check, { timeout: 1000, interval: 20 }) : check());

async function counterRows(t: TestApp): Promise<Array<{ key: string; window_start: number; count: number }>> {
  return t.app.runtime.fork().getConnection().execute('select "key", window_start, count from rate_limit_counters order by "key", window_start', [], 'all');
}

beforeAll(async () => {
  first = await createTestApp(env, { clock });
  second = await createTestApp(env, { clock });
  defaultId = (await first.request('GET', '/v1/admin/workspaces/default')).body.id;
});
afterAll(async () => {
  await first?.close();
  await second?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('two app instances on one database file', () => {
  it('the second finds the data the first bootstrapped, including the local virtual key', async () => {
    expect(first.app.bootstrapResult.created).toBe(true);
    expect(second.app.bootstrapResult).toEqual({ created: false });
    const a = (await first.request('GET', '/v1/integrations/local')).body;
    const b = (await second.request('GET', '/v1/integrations/local')).body;
    expect(b).toEqual(a);
    expect((await resolveIn(second)).provider.slug).toBe('local');
  });

  it('a limit set through one is enforced by both', async () => {
    const r = await first.request('PUT', '/v1/integrations/local/workspaces', { body: { workspaces: [{ id: 'default', enabled: true, rate_limits: [{ unit: 'rpm', value: 50 }] }] } });
    expect(r.status).toBe(200);
    await seenBySecond(async () => expect((await resolveIn(second)).access.rateLimit).toEqual({ type: 'requests', unit: 'rpm', value: 50 }));
  });

  it('200 concurrent checks against a limit of 50 admit exactly 50', async () => {
    const [resolvedA, resolvedB] = await Promise.all([resolveIn(first), resolveIn(second)]);
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) => {
        const [t, resolved] = i % 2 === 0 ? [first, resolvedA] : [second, resolvedB];
        return enforceRateLimit(t.app.runtime, resolved).then(
          (headers) => ({ allowed: true as const, headers }),
          (error: unknown) => ({ allowed: false as const, error }),
        );
      }),
    );
    const allowed = outcomes.filter((o) => o.allowed);
    const refused = outcomes.filter((o) => !o.allowed);
    expect(allowed).toHaveLength(50);
    expect(refused).toHaveLength(150);
    // Each admitted request saw its own count: remaining 49…0, each exactly once.
    const remaining = allowed.map((o) => Number((o as { headers: Record<string, string> }).headers['x-ratelimit-remaining'])).sort((x, y) => x - y);
    expect(remaining).toEqual(Array.from({ length: 50 }, (_, i) => i));
    // Both instances took part in admitting.
    const admittedBy = new Set(outcomes.flatMap((o, i) => (o.allowed ? [i % 2] : [])));
    expect(admittedBy).toEqual(new Set([0, 1]));
    const resetUnix = String(Date.parse('2026-11-22T10:01:00.000Z') / 1000);
    for (const o of refused) {
      const error = (o as { error: unknown }).error;
      expect(error).toBeInstanceOf(RateLimitError);
      expect(error).toMatchObject({
        status: 429,
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        message: "Rate limit reached for integration 'local' in this workspace: 50 requests per minute. Retry after 30 seconds.",
        headers: { 'x-ratelimit-limit': '50', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': resetUnix, 'retry-after': '30' },
      });
    }
    expect(await counterRows(second)).toEqual([{ key: `${resolvedA.integration.id}:${defaultId}:rpm`, window_start: Date.parse('2026-11-22T10:00:00.000Z'), count: 50 }]);
  });

  it('the count starts again in the next window (moving the clock), and old windows are dropped', async () => {
    const resolved = await resolveIn(first);
    clock.set('2026-11-22T10:00:59.000Z');
    await expect(enforceRateLimit(second.app.runtime, resolved)).rejects.toMatchObject({ headers: { 'retry-after': '1' } });
    clock.set('2026-11-22T10:01:00.000Z');
    expect(await enforceRateLimit(second.app.runtime, resolved)).toEqual({
      'x-ratelimit-limit': '50',
      'x-ratelimit-remaining': '49',
      'x-ratelimit-reset': String(Date.parse('2026-11-22T10:02:00.000Z') / 1000),
    });
    expect(await enforceRateLimit(first.app.runtime, resolved)).toMatchObject({ 'x-ratelimit-remaining': '48' });
    expect(await counterRows(first)).toEqual([{ key: `${resolved.integration.id}:${defaultId}:rpm`, window_start: Date.parse('2026-11-22T10:01:00.000Z'), count: 2 }]);
  });

  it('changing the unit starts a fresh count; no limit means no check', async () => {
    await first.request('PUT', '/v1/integrations/local/workspaces', { body: { workspaces: [{ id: 'default', enabled: true, rate_limits: [{ unit: 'rph', value: 2 }] }] } });
    const resolved = await seenBySecond(async () => {
      const now = await resolveIn(second);
      expect(now.access.rateLimit?.unit).toBe('rph');
      return now;
    });
    expect(await enforceRateLimit(second.app.runtime, resolved)).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1' });
    expect(await enforceRateLimit(first.app.runtime, resolved)).toMatchObject({ 'x-ratelimit-remaining': '0' });
    await expect(enforceRateLimit(first.app.runtime, resolved)).rejects.toMatchObject({
      message: "Rate limit reached for integration 'local' in this workspace: 2 requests per hour. Retry after 3540 seconds.",
    });
    await first.request('PUT', '/v1/integrations/local/workspaces', { body: { workspaces: [{ id: 'default', enabled: true, rate_limits: null }] } });
    expect(await enforceRateLimit(first.app.runtime, await resolveIn(first))).toEqual({});
  });
});

describe('checkRateLimit', () => {
  it('keeps (integration, workspace) pairs apart, with day windows ending at 00:00 UTC', async () => {
    clock.set('2026-11-22T23:59:58.000Z');
    const runtime = first.app.runtime;
    const check = (workspaceId: string) => checkRateLimit(runtime, { integrationId: 'int-x', workspaceId, unit: 'rpd', value: 1 });
    const a1: RateLimitResult = await check('ws-a');
    expect(a1).toEqual({ allowed: true, limit: 1, remaining: 0, resetAt: new Date('2026-11-23T00:00:00.000Z'), retryAfterSeconds: 0 });
    expect(await check('ws-b')).toMatchObject({ allowed: true });
    const a2 = await check('ws-a');
    expect(a2).toEqual({ allowed: false, limit: 1, remaining: 0, resetAt: new Date('2026-11-23T00:00:00.000Z'), retryAfterSeconds: 2 });
    expect(rateLimitHeaders(a2)['retry-after']).toBe('2');
    clock.set('2026-11-23T00:00:00.000Z');
    expect(await check('ws-a')).toMatchObject({ allowed: true, resetAt: new Date('2026-11-24T00:00:00.000Z') });
  });
});
