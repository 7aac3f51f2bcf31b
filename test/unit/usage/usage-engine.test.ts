import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, UsageLimitError } from '../../../src/errors.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { uuid } from '../../../src/lib/ids.js';
import { UsageAlertSchema } from '../../../src/modules/usage/usage-alert.entity.js';
import {
  measureUsage,
  usageAlertsTopic,
  usageEngine,
  usageLimitError,
  type LimitSpec,
  type Reservation,
  type UsageAlertEvent,
  type UsageEngine,
} from '../../../src/modules/usage/usage-engine.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { onPostgres } from '../../helpers/database.js';

/*
 * The usage engine on a FILE database (WAL, busy timeout), as in production: exact counts under
 * concurrency, the cap at the edge of a budget, alerts exactly once, resets and period rollover.
 */

const T0 = '2026-11-22T10:00:00.000Z';

let dir: string;
let t: TestApp;
let engine: UsageEngine;
const clock = new ManualClock(new Date(T0));
const logLines: Array<Record<string, any>> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-usage-'));
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  t = await createTestApp({ DATABASE_URL: `sqlite:${join(dir, 'usage.sqlite')}`, LOG_LEVEL: 'warn' }, { clock, logDestination });
  engine = usageEngine(t.app.runtime);
});
afterEach(() => clock.set(T0));
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

function spec(overrides: Partial<LimitSpec> = {}): LimitSpec {
  return {
    ownerType: 'workspace_access',
    ownerId: uuid(),
    valueKey: 'workspace:w1',
    type: 'tokens',
    creditLimit: 100,
    alertThreshold: null,
    periodicReset: null,
    workspaceId: null,
    label: 'test limit',
    ...overrides,
  };
}

async function usageOf(s: LimitSpec): Promise<{ currentUsage: number; reserved: number } | undefined> {
  const buckets = await engine.currentBuckets(s.ownerType, s.ownerId, { type: s.type, periodicReset: s.periodicReset });
  const bucket = buckets.find((b) => b.valueKey === s.valueKey);
  return bucket && { currentUsage: bucket.currentUsage, reserved: bucket.reserved };
}

/** Collects what is published on a workspace's alert topic until `stop()`. */
function collectAlerts(workspaceId: string): { alerts: UsageAlertEvent[]; stop: () => Promise<void> } {
  const alerts: UsageAlertEvent[] = [];
  const iterator = t.app.runtime.pubsub.subscribe<UsageAlertEvent>(usageAlertsTopic(workspaceId));
  const loop = (async () => {
    for await (const alert of iterator) alerts.push(alert);
  })();
  return {
    alerts,
    stop: async () => {
      await iterator.return?.();
      await loop;
    },
  };
}

describe('exact counting under concurrency', () => {
  it('200 concurrent record calls lose nothing (tokens and cost, two limits each)', async () => {
    const tokens = spec({ creditLimit: 1_000_000 });
    const cost = spec({ type: 'cost', creditLimit: 1_000 });
    await Promise.all(Array.from({ length: 200 }, () => engine.record([tokens, cost], { tokens: 7, cost: 0.001 })));
    expect(await usageOf(tokens)).toEqual({ currentUsage: 1400, reserved: 0 });
    // 200 × $0.001 is exactly $0.2: amounts are counted in integer nano-dollars, not summed floats.
    expect(await usageOf(cost)).toEqual({ currentUsage: 0.2, reserved: 0 });
  });

  it('100 concurrent reservations at the edge: admitted usage exceeds the limit by at most one request', async () => {
    const s = spec({ creditLimit: 1000 });
    await engine.record([s], { tokens: 955, cost: 0 });
    const results = await Promise.all(Array.from({ length: 100 }, () => engine.reserve([s], { tokens: 10, cost: 0 })));
    const admitted = results.filter((r) => r.ok);
    // 955 + 10 × 5 = 1005: the fifth request started at 995 < 1000; a sixth would start at 1005.
    expect(admitted).toHaveLength(5);
    expect(await usageOf(s)).toEqual({ currentUsage: 955, reserved: 50 });
    const refused = results.find((r) => !r.ok);
    expect(refused).toEqual({ ok: false, refusedBy: s, currentUsage: 955, reserved: 50 });
    await Promise.all(admitted.map((r) => r.ok && engine.settle(r.reservation, { tokens: 10, cost: 0 })));
    const final = await usageOf(s);
    expect(final).toEqual({ currentUsage: 1005, reserved: 0 });
    expect(final!.currentUsage).toBeLessThanOrEqual(1000 + 10);
  });

  it('two processes on one database file (two connections) keep the cap too', async () => {
    const second = await createTestApp({ DATABASE_URL: `sqlite:${join(dir, 'usage.sqlite')}` }, { clock });
    try {
      const other = usageEngine(second.app.runtime);
      const s = spec({ creditLimit: 500 });
      const results = await Promise.all(
        Array.from({ length: 100 }, (_v, i) => (i % 2 ? engine : other).reserve([s], { tokens: 7, cost: 0 })),
      );
      const admitted = results.filter((r) => r.ok);
      // ceil(500 / 7) = 72 reservations start below 500; the last ends at 504 ≤ 500 + 7.
      expect(admitted).toHaveLength(72);
      await Promise.all(admitted.map((r, i) => r.ok && (i % 2 ? engine : other).settle(r.reservation, { tokens: 7, cost: 0 })));
      expect(await usageOf(s)).toEqual({ currentUsage: 504, reserved: 0 });
    } finally {
      await second.close();
    }
  });

  it('reservations are all-or-nothing across limits', async () => {
    const roomy = spec({ creditLimit: 100 });
    const full = spec({ creditLimit: 10, label: 'the full one' });
    await engine.record([full], { tokens: 10, cost: 0 });
    const result = await engine.reserve([roomy, full], { tokens: 5, cost: 0 });
    expect(result).toEqual({ ok: false, refusedBy: full, currentUsage: 10, reserved: 0 });
    // Nothing was held on the limit that had room (its new bucket was rolled back too).
    expect(await usageOf(roomy)).toBeUndefined();
    expect(await engine.reserve([], { tokens: 5, cost: 0 })).toMatchObject({ ok: true, reservation: { specs: [], items: [] } });
  });

  it('a limit of 0 refuses everything', async () => {
    const s = spec({ creditLimit: 0 });
    expect(await engine.reserve([s], { tokens: 0, cost: 0 })).toEqual({ ok: false, refusedBy: s, currentUsage: 0, reserved: 0 });
    expect(await engine.check([s])).toEqual({ ok: false, refusedBy: s, currentUsage: 0, reserved: 0 });
  });
});

describe('buckets a reservation writes', () => {
  const stored = async (s: LimitSpec) =>
    t.app.runtime
      .fork()
      .getConnection()
      .execute<Array<{ credit_limit: unknown; alert_threshold: unknown; workspace_id: unknown }>>(
        'select credit_limit, alert_threshold, workspace_id from usage_buckets where owner_id = ? and value_key = ?',
        [s.ownerId, s.valueKey],
        'all',
      )
      .then((rows) => rows.map((row: { credit_limit: unknown; alert_threshold: unknown; workspace_id: unknown }) => ({ limit: Number(row.credit_limit), threshold: row.alert_threshold === null ? null : Number(row.alert_threshold), workspace: row.workspace_id })));
  const hold = async (s: LimitSpec) => {
    const result = await engine.reserve([s], { tokens: 1, cost: 0 });
    if (!result.ok) throw new Error('refused');
    await engine.release(result.reservation);
  };

  it('store the spec as it is now: a change of limit, threshold or workspace (to or from none) is written by the next reservation', async () => {
    const workspace = uuid();
    const first = spec({ creditLimit: 100 });
    await hold(first);
    expect(await stored(first)).toEqual([{ limit: 100, threshold: null, workspace: null }]);
    const changed = { ...first, creditLimit: 50, alertThreshold: 40, workspaceId: workspace };
    await hold(changed);
    expect(await stored(first)).toEqual([{ limit: 50, threshold: 40, workspace }]);
    const back = { ...changed, alertThreshold: null, workspaceId: null };
    await hold(back);
    expect(await stored(first)).toEqual([{ limit: 50, threshold: null, workspace: null }]);
    await hold({ ...back, alertThreshold: 0 });
    expect(await stored(first)).toEqual([{ limit: 50, threshold: 0, workspace: null }]);
  });

  it('keep value keys apart whatever characters they hold', async () => {
    const plain = spec({ valueKey: 'metadata.user:a' });
    // The bucket key's separator, NUL, inside a value key (PostgreSQL refuses NUL in text: there, another).
    const odd = { ...plain, valueKey: onPostgres ? 'metadata.user:a|tokens' : 'metadata.user:a\u0000tokens' };
    await hold(plain);
    await hold(odd);
    expect(await stored(plain)).toHaveLength(1);
    expect(await stored(odd)).toHaveLength(1);
  });
});

describe('settle and release', () => {
  async function reserved(s: LimitSpec, tokens: number): Promise<Reservation> {
    const r = await engine.reserve([s], { tokens, cost: 0 });
    if (!r.ok) throw new Error('refused');
    return r.reservation;
  }

  it('settle replaces the estimate by the actual usage, exactly once', async () => {
    const s = spec();
    const reservation = await reserved(s, 30);
    expect(await usageOf(s)).toEqual({ currentUsage: 0, reserved: 30 });
    await engine.settle(reservation, { tokens: 12, cost: 0 });
    expect(await usageOf(s)).toEqual({ currentUsage: 12, reserved: 0 });
    await engine.settle(reservation, { tokens: 12, cost: 0 });
    await engine.release(reservation);
    expect(await usageOf(s)).toEqual({ currentUsage: 12, reserved: 0 });
  });

  it('a deferred settle waits for the end of the turn; every reader and reservation applies it first', async () => {
    const s = spec({ creditLimit: 50 });
    const first = await reserved(s, 40);
    let written = false;
    engine.defer(async () => {
      await engine.settle(first, { tokens: 30, cost: 0 });
      written = true;
    });
    expect(written).toBe(false);
    // Applied first: the new reservation finds the 30 used, not the 40 that were held.
    const second = await engine.reserve([s], { tokens: 15, cost: 0 });
    expect(written).toBe(true);
    expect(second.ok && second.usage).toEqual([{ currentUsage: 30, reserved: 15 }]);
    // A reader in the same turn as the deferral sees it too.
    engine.defer(() => engine.release((second as { reservation: Reservation }).reservation));
    expect(await usageOf(s)).toEqual({ currentUsage: 30, reserved: 0 });
    // Left alone, the deferred write starts once the turn is over.
    const third = await reserved(s, 5);
    let started = false;
    engine.defer(async () => {
      started = true;
      await engine.settle(third, { tokens: 5, cost: 0 });
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(true);
    expect(await usageOf(s)).toEqual({ currentUsage: 35, reserved: 0 });
  });

  it('release gives the estimate back, exactly once; a settle after it changes nothing', async () => {
    const s = spec();
    const reservation = await reserved(s, 40);
    await Promise.all([engine.release(reservation), engine.release(reservation)]);
    expect(await usageOf(s)).toEqual({ currentUsage: 0, reserved: 0 });
    await engine.settle(reservation, { tokens: 40, cost: 0 });
    expect(await usageOf(s)).toEqual({ currentUsage: 0, reserved: 0 });
  });

  it('many concurrent reserve → release cycles leak nothing', async () => {
    const s = spec({ creditLimit: 1_000_000 });
    await Promise.all(
      Array.from({ length: 100 }, async (_v, i) => {
        const r = await reserved(s, 50);
        if (i % 2) await engine.release(r);
        else await engine.settle(r, { tokens: 3, cost: 0 });
      }),
    );
    expect(await usageOf(s)).toEqual({ currentUsage: 150, reserved: 0 });
  });

  it('the stale sweep gives back abandoned reservations; a late settle still counts the usage', async () => {
    const s = spec();
    const abandoned = await reserved(s, 20);
    const late = await reserved(s, 20);
    clock.advance(60 * 60_000);
    expect(await engine.sweepStaleReservations(30 * 60_000)).toBe(2);
    expect(await usageOf(s)).toEqual({ currentUsage: 0, reserved: 0 });
    await engine.settle(late, { tokens: 15, cost: 0 });
    await engine.release(abandoned);
    expect(await usageOf(s)).toEqual({ currentUsage: 15, reserved: 0 });
    expect(await engine.sweepStaleReservations(30 * 60_000)).toBe(0);
  });
});

describe('alerts', () => {
  it('crossing the threshold and reaching the limit each raise exactly one alert, even under concurrency', async () => {
    const workspaceId = uuid();
    const s = spec({ creditLimit: 100, alertThreshold: 50, workspaceId, valueKey: 'api_key:k1', label: "usage-limit policy 'Team' (p1)" });
    const { alerts, stop } = collectAlerts(workspaceId);
    const before = logLines.length;
    await Promise.all(Array.from({ length: 150 }, () => engine.record([s], { tokens: 1, cost: 0 })));
    await new Promise((r) => setTimeout(r, 20));
    await stop();
    expect(alerts.map((a) => a.kind).sort()).toEqual(['exhausted', 'threshold']);
    const threshold = alerts.find((a) => a.kind === 'threshold')!;
    expect(threshold).toEqual({
      id: expect.any(String),
      kind: 'threshold',
      ownerType: 'workspace_access',
      ownerId: s.ownerId,
      label: s.label,
      valueKey: 'api_key:k1',
      periodKey: 'all',
      type: 'tokens',
      currentUsage: expect.any(Number),
      creditLimit: 100,
      alertThreshold: 50,
      workspaceId,
      message: expect.stringMatching(/^Usage alert: usage-limit policy 'Team' \(p1\) passed its alert threshold of 50 tokens for 'api_key:k1': \d+ tokens of 100 tokens used\.$/),
      createdAt: new Date(T0),
    });
    expect(threshold.currentUsage).toBeGreaterThanOrEqual(50);
    const exhausted = alerts.find((a) => a.kind === 'exhausted')!;
    expect(exhausted.currentUsage).toBeGreaterThanOrEqual(100);
    expect(exhausted.message).toMatch(/^Usage limit reached: usage-limit policy 'Team' \(p1\) has used \d+ tokens of 100 tokens for 'api_key:k1'; further requests are refused until a reset\.$/);
    // One structured log line per alert, and one history row.
    const lines = logLines.slice(before).filter((l) => l.event === 'usage_alert');
    expect(lines.map((l) => l.alert.kind).sort()).toEqual(['exhausted', 'threshold']);
    expect(lines[0]).toMatchObject({ level: 40, msg: expect.any(String), alert: { ownerId: s.ownerId, workspaceId } });
    const rows = await t.app.runtime.fork().find(UsageAlertSchema, { ownerId: s.ownerId }, { orderBy: { kind: 'asc' } });
    expect(rows.map((r) => r.kind)).toEqual(['exhausted', 'threshold']);
    const buckets = await engine.currentBuckets(s.ownerType, s.ownerId);
    expect(buckets).toEqual([
      {
        valueKey: 'api_key:k1',
        type: 'tokens',
        periodKey: 'all',
        currentUsage: 150,
        reserved: 0,
        status: 'exhausted',
        isThresholdAlertsSent: true,
        isExhaustedAlertsSent: true,
      },
    ]);
  });

  it('one run past both lines raises both; settling raises alerts too; no threshold means no threshold alert', async () => {
    const workspaceId = uuid();
    const both = spec({ creditLimit: 10, alertThreshold: 5, workspaceId });
    const noThreshold = spec({ creditLimit: 10, workspaceId });
    const { alerts, stop } = collectAlerts(workspaceId);
    const r = await engine.reserve([both, noThreshold], { tokens: 1, cost: 0 });
    expect(r.ok).toBe(true);
    if (r.ok) await engine.settle(r.reservation, { tokens: 12, cost: 0 });
    await stop();
    expect(alerts.map((a) => `${a.ownerId === both.ownerId ? 'both' : 'none'}:${a.kind}`)).toEqual(['both:threshold', 'both:exhausted', 'none:exhausted']);
  });

  it('a reset zeroes the bucket, clears the flags and lets the alerts fire again', async () => {
    const workspaceId = uuid();
    const s = spec({ creditLimit: 10, alertThreshold: 5, workspaceId, periodicReset: 'monthly' });
    const { alerts, stop } = collectAlerts(workspaceId);
    await engine.record([s], { tokens: 10, cost: 0 });
    expect((await engine.reserve([s], { tokens: 1, cost: 0 })).ok).toBe(false);
    expect(await engine.resetUsage(s.ownerType, s.ownerId)).toBe(1);
    expect(await engine.currentBuckets(s.ownerType, s.ownerId)).toEqual([
      expect.objectContaining({ currentUsage: 0, status: 'active', isThresholdAlertsSent: false, isExhaustedAlertsSent: false }),
    ]);
    expect((await engine.check([s])).ok).toBe(true);
    await engine.record([s], { tokens: 10, cost: 0 });
    await stop();
    expect(alerts.map((a) => a.kind)).toEqual(['threshold', 'exhausted', 'threshold', 'exhausted']);
  });

  it('resetUsage with a value key touches only that bucket', async () => {
    const a = spec({ valueKey: 'api_key:a' });
    const b = { ...a, valueKey: 'api_key:b' };
    await engine.record([a, b], { tokens: 5, cost: 0 });
    expect(await engine.resetUsage(a.ownerType, a.ownerId, 'api_key:a')).toBe(1);
    expect((await engine.currentBuckets(a.ownerType, a.ownerId)).map((x) => [x.valueKey, x.currentUsage])).toEqual([
      ['api_key:a', 0],
      ['api_key:b', 5],
    ]);
  });
});

describe('periods derived from the clock', () => {
  it('monthly: a full budget on Dec 31 23:59:59 is fresh at Jan 1 00:00 UTC (year end)', async () => {
    clock.set('2026-12-31T23:59:59.999Z');
    const s = spec({ creditLimit: 100, periodicReset: 'monthly' });
    await engine.record([s], { tokens: 100, cost: 0 });
    expect((await engine.reserve([s], { tokens: 1, cost: 0 })).ok).toBe(false);
    clock.set('2027-01-01T00:00:00.000Z');
    const r = await engine.reserve([s], { tokens: 1, cost: 0 });
    expect(r.ok).toBe(true);
    expect(await engine.currentBuckets(s.ownerType, s.ownerId)).toEqual([
      expect.objectContaining({ periodKey: '2027-01', currentUsage: 0, reserved: 1, status: 'active' }),
    ]);
    // A run reserved in December and settled in January counts where it was admitted.
    clock.set('2026-12-31T23:59:00.000Z');
    await engine.resetUsage(s.ownerType, s.ownerId);
    const december = await engine.reserve([s], { tokens: 5, cost: 0 });
    clock.set('2027-01-01T00:01:00.000Z');
    if (december.ok) await engine.settle(december.reservation, { tokens: 5, cost: 0 });
    if (r.ok) await engine.release(r.reservation);
    expect((await engine.currentBuckets(s.ownerType, s.ownerId)).map((b) => [b.periodKey, b.currentUsage, b.reserved])).toEqual([['2027-01', 0, 0]]);
    clock.set('2026-12-15T00:00:00.000Z');
    expect((await engine.currentBuckets(s.ownerType, s.ownerId)).map((b) => [b.periodKey, b.currentUsage, b.reserved])).toEqual([['2026-12', 5, 0]]);
  });

  it('weekly: resets at Monday 00:00 UTC, not at the new year inside a week', async () => {
    const s = spec({ creditLimit: 100, periodicReset: 'weekly' });
    clock.set('2026-12-31T12:00:00.000Z'); // Thursday of ISO week 2026-W53
    await engine.record([s], { tokens: 100, cost: 0 });
    clock.set('2027-01-01T00:00:00.000Z'); // Friday, same week: no reset
    expect(await engine.reserve([s], { tokens: 1, cost: 0 })).toMatchObject({ ok: false, currentUsage: 100 });
    clock.set('2027-01-03T23:59:59.999Z'); // Sunday, still the same week
    expect((await engine.check([s])).ok).toBe(false);
    clock.set('2027-01-04T00:00:00.000Z'); // Monday: a new week
    expect((await engine.check([s])).ok).toBe(true);
    await engine.record([s], { tokens: 3, cost: 0 });
    expect(await engine.currentBuckets(s.ownerType, s.ownerId)).toEqual([expect.objectContaining({ periodKey: '2027-W01', currentUsage: 3 })]);
  });

  it('no periodic reset: usage accumulates across years', async () => {
    const s = spec({ creditLimit: 100 });
    clock.set('2026-06-01T00:00:00.000Z');
    await engine.record([s], { tokens: 60, cost: 0 });
    clock.set('2028-06-01T00:00:00.000Z');
    await engine.record([s], { tokens: 60, cost: 0 });
    expect(await engine.currentBuckets(s.ownerType, s.ownerId)).toEqual([expect.objectContaining({ periodKey: 'all', currentUsage: 120, status: 'exhausted' })]);
  });

  it('changing the reset rule starts a fresh bucket', async () => {
    const monthly = spec({ creditLimit: 100, periodicReset: 'monthly' });
    await engine.record([monthly], { tokens: 100, cost: 0 });
    const weekly = { ...monthly, periodicReset: 'weekly' as const };
    expect((await engine.reserve([weekly], { tokens: 1, cost: 0 })).ok).toBe(true);
    expect(await engine.currentBuckets(weekly.ownerType, weekly.ownerId, { periodicReset: 'weekly' })).toEqual([
      expect.objectContaining({ periodKey: '2026-W47', currentUsage: 0, reserved: 1 }),
    ]);
  });
});

describe('prices and refusals', () => {
  const costLimit = spec({ type: 'cost', label: "usage-limit policy 'Budget' (p9)" });

  it('measureUsage prices cost limits and refuses an unknown model by name', () => {
    expect(measureUsage([costLimit], 'gpt-4o-mini', { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 })).toEqual({ tokens: 2_000_000, cost: 0.75 });
    expect(measureUsage([spec()], 'my-own-model', { prompt_tokens: 3, completion_tokens: 4 })).toEqual({ tokens: 7, cost: 0 });
    expect(measureUsage([costLimit], 'my-own-model', { prompt_tokens: 1000, completion_tokens: 0 }, { 'my-own-model': { input: 2, output: 0 } })).toEqual({
      tokens: 1000,
      cost: 0.002,
    });
    let thrown: unknown;
    try {
      measureUsage([spec(), costLimit], 'my-own-model', { prompt_tokens: 3, completion_tokens: 4 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BadRequestError);
    expect(thrown).toMatchObject({
      status: 400,
      param: 'model',
      code: 'model_price_unknown',
      message:
        "No price is known for model 'my-own-model', so a cost limit cannot count it. Add a price for it to the integration's configuration. " +
        "It is needed by usage-limit policy 'Budget' (p9).",
    });
  });

  it('usageLimitError is the 412 of the refusing limit', () => {
    const error = usageLimitError({ refusedBy: { ...costLimit, creditLimit: 5, periodicReset: 'monthly', valueKey: 'api_key:k' }, currentUsage: 4.5, reserved: 0.75 });
    expect(error).toBeInstanceOf(UsageLimitError);
    expect(error).toMatchObject({ status: 412, type: 'usage_limit_error', code: 'usage_limit_exceeded', param: null });
    expect(error.message).toBe(
      "Usage limit reached: usage-limit policy 'Budget' (p9) has used $4.5 of $5 ($0.75 more held by requests in progress) for 'api_key:k' this month.",
    );
  });

  it('amounts must be finite and non-negative', async () => {
    await expect(engine.record([spec()], { tokens: -1, cost: 0 })).rejects.toThrow(RangeError);
    await expect(engine.reserve([spec({ type: 'cost' })], { tokens: 0, cost: Number.NaN })).rejects.toThrow(RangeError);
  });
});
