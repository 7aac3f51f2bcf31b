// The usage accounting engine: buckets per (limit owner, value key, period), reservations around
// model calls, and alerts. Every change to a counter is one atomic SQL statement (`used = used + ?`),
// never a read-modify-write in JavaScript, so concurrent requests and processes lose nothing.
// Transactions are short (a few statements, no await on anything but the database) and never span
// a model call: reserve → (model call, no transaction) → settle or release.
//
// Amounts are stored as integers in the limit's unit: tokens, or nano-dollars (1e-9 USD) for cost
// limits. Integer sums are exact (float sums drift: 0.1 + 0.2), and 2^53 nano-dollars is
// about 9 million dollars per bucket and period.
import { executeSql } from '../../db/sql.js';
import type { Connection, EntityManager, Transaction } from '@mikro-orm/core';
import { BadRequestError, UsageLimitError } from '../../errors.js';
import { timeOrderedUuid, uuid } from '../../lib/ids.js';
import type { Runtime } from '../../runtime.js';
import { bucketStatus, decideAlerts, type BucketStatus } from './alerts.js';
import { PriceError, usageAmount, type PriceOverrides, type TokenUsage } from './prices.js';
import { UsageAlertSchema } from './usage-alert.entity.js';
import type { ReservationItem } from './usage-reservation.entity.js';
import { periodKey, type PeriodicReset } from './usage-periods.js';
import { setBounded } from '../../lib/bounded-map.js';

export type LimitOwnerType = 'policy' | 'workspace_access';
export type LimitType = 'cost' | 'tokens';

/** One limit that applies to one request: the owner's budget for the request's value key. */
export interface LimitSpec {
  ownerType: LimitOwnerType;
  /** Policy id, or workspace-access id. */
  ownerId: string;
  /** From `valueKey(groupBy, req)` for policies; `workspace:<workspaceId>` for workspace access. */
  valueKey: string;
  type: LimitType;
  /** Tokens, or US dollars for cost limits. */
  creditLimit: number;
  alertThreshold: number | null;
  periodicReset: PeriodicReset;
  /** Where alerts are published (`usageAlerts(workspaceId)`); null: logged only. */
  workspaceId: string | null;
  /** Human name used in messages, e.g. "usage-limit policy 'Team budget' (<id>)". */
  label: string;
}

/** Usage of one request: total tokens, and its cost in US dollars (only read by cost limits). */
export interface UsageAmount {
  tokens: number;
  cost: number;
}

/** Estimates held on buckets until `settle` or `release`. Keep the object for the duration of the call. */
export interface Reservation {
  id: string;
  specs: LimitSpec[];
  estimate: UsageAmount;
  /** Parallel to `specs`: the bucket each estimate was reserved on (its period at reservation time). */
  items: ReservationItem[];
  createdAt: Date;
}

/** Statements that commit with a settle or release, run in its transaction once it claimed the reservation. */
export type WithClaim = (tx: EntityManager) => Promise<void>;

/** A bucket's usage in a limit's unit: settled, and held by requests in progress. */
export interface BucketAmounts {
  currentUsage: number;
  reserved: number;
}

export type ReserveResult =
  | {
      ok: true;
      reservation: Reservation;
      /** Parallel to the specs: each bucket's usage right after this reservation. */
      usage: BucketAmounts[];
    }
  | {
      ok: false;
      refusedBy: LimitSpec;
      /** Settled usage of the refusing bucket, in the limit's unit. */
      currentUsage: number;
      /** Estimates of requests in progress on that bucket, in the limit's unit. */
      reserved: number;
    };

export type CheckResult = { ok: true } | { ok: false; refusedBy: LimitSpec; currentUsage: number; reserved: number };

export interface BucketUsage {
  valueKey: string;
  type: LimitType;
  periodKey: string;
  currentUsage: number;
  reserved: number;
  status: BucketStatus;
  isThresholdAlertsSent: boolean;
  isExhaustedAlertsSent: boolean;
}

/** Narrows which buckets count as the owner's current ones (otherwise: each row's own reset rule). */
export interface BucketFilter {
  periodicReset?: PeriodicReset;
  type?: LimitType;
  /** Status is computed against this limit instead of the one last stored on the bucket. */
  creditLimit?: number;
}

/** Which of an owner's value keys `valueKeyPage` returns, and against which limit. */
export interface ValueKeyQuery {
  type: LimitType;
  /** The owner's reset rule: which period is the current one. */
  periodicReset: PeriodicReset;
  /** The owner's limit, for each value key's status. */
  creditLimit: number;
  status?: BucketStatus | null;
  /** Only value keys containing this text (case-insensitive). */
  search?: string | null;
  /** Only this value key. */
  valueKey?: string | null;
  offset: number;
  limit: number;
}

export type UsageAlertKind = 'threshold' | 'exhausted';

/** What `usageAlerts:<workspaceId>` carries and the alert log line holds: a plain snapshot. */
export interface UsageAlertEvent {
  id: string;
  kind: UsageAlertKind;
  ownerType: LimitOwnerType;
  ownerId: string;
  label: string;
  valueKey: string;
  periodKey: string;
  type: LimitType;
  currentUsage: number;
  creditLimit: number;
  alertThreshold: number | null;
  workspaceId: string | null;
  message: string;
  createdAt: Date;
}

export const usageAlertsTopic = (workspaceId: string): string => `usageAlerts:${workspaceId}`;

const NANOS_PER_DOLLAR = 1_000_000_000;
const scaleOf = (type: LimitType): number => (type === 'cost' ? NANOS_PER_DOLLAR : 1);

/** A request's amount in integer units of a limit of `type`. */
export function toUnits(type: LimitType, amount: number): number {
  if (!Number.isFinite(amount) || amount < 0) throw new RangeError(`Usage amounts must be finite and non-negative, got ${String(amount)}`);
  return Math.min(Math.round(amount * scaleOf(type)), Number.MAX_SAFE_INTEGER);
}

/**
 * A limit in integer units. Token usage is whole, so a limit of 100.5 tokens is reached at 101;
 * cost limits are rounded to the nano-dollar. Limits beyond the safe range mean "no practical limit".
 */
export function limitToUnits(type: LimitType, limit: number): number {
  const scaled = type === 'tokens' ? Math.ceil(limit) : Math.round(limit * NANOS_PER_DOLLAR);
  return Math.min(scaled, Number.MAX_SAFE_INTEGER);
}

export function fromUnits(type: LimitType, units: number): number {
  return units / scaleOf(type);
}

const amountFor = (type: LimitType, amount: UsageAmount): number => (type === 'cost' ? amount.cost : amount.tokens);

function formatAmount(type: LimitType, value: number): string {
  return type === 'cost' ? `$${value}` : `${value} tokens`;
}

/**
 * The usage of one run as every limit in `specs` counts it. Cost limits need the model's price: an
 * unknown model is refused (400, code `model_price_unknown`, naming the model and the limit) rather
 * than counted as free, which would turn a budget into no limit at all. Without cost limits, an
 * unpriced model is fine.
 */
export function measureUsage(specs: readonly LimitSpec[], model: string, usage: TokenUsage, overrides?: PriceOverrides): UsageAmount {
  const tokens = usageAmount('tokens', model, usage);
  const costLimit = specs.find((spec) => spec.type === 'cost');
  if (!costLimit) return { tokens, cost: 0 };
  try {
    return { tokens, cost: usageAmount('cost', model, usage, overrides) };
  } catch (error) {
    if (error instanceof PriceError) {
      throw new BadRequestError(`${error.message} It is needed by ${costLimit.label}.`, { param: 'model', code: 'model_price_unknown' });
    }
    throw error;
  }
}

/** The 412 a data-plane request gets when a limit refuses it. */
export function usageLimitError(refusal: { refusedBy: LimitSpec; currentUsage: number; reserved: number }): UsageLimitError {
  const { refusedBy: spec, currentUsage, reserved } = refusal;
  const inFlight = reserved > 0 ? ` (${formatAmount(spec.type, reserved)} more held by requests in progress)` : '';
  return new UsageLimitError(
    `Usage limit reached: ${spec.label} has used ${formatAmount(spec.type, currentUsage)} of ${formatAmount(spec.type, spec.creditLimit)}` +
      `${inFlight} for '${spec.valueKey}'${untilText(spec)}.`,
  );
}

function untilText(spec: LimitSpec): string {
  if (spec.periodicReset === 'monthly') return ' this month';
  if (spec.periodicReset === 'weekly') return ' this week';
  return '';
}

interface TouchedBucket {
  spec: LimitSpec;
  bucketId: string;
  valueKey: string;
  periodKey: string;
  used: number;
  thresholdAlertSent: boolean;
  exhaustedAlertSent: boolean;
}

/** Thrown inside the reserve transaction to roll it back. */
class Refusal {
  constructor(
    readonly spec: LimitSpec,
    readonly usedUnits: number,
    readonly reservedUnits: number,
  ) {}
}

type Row = Record<string, unknown>;
const num = (value: unknown): number => Number(value ?? 0);
const bool = (value: unknown): boolean => value === true || value === 1 || value === '1' || value === 't';

/** Bucket ids kept for reservations (see `bucketOf`); the oldest go first past this. */
const KNOWN_BUCKETS_LIMIT = 10_000;

export class UsageEngine {
  /**
   * Bucket ids by everything `ensureBucket` writes (owner, value key, type, period, limits,
   * workspace), kept only when this process is alone on its database: a reservation on a bucket
   * already upserted with the same limits then costs no upsert. Buckets are never deleted, a
   * changed limit or a new period is a new key, and `updateLimits` forgets them all. Several
   * instances upsert on every reservation, as before.
   */
  private readonly knownBuckets = new Map<string, string>();
  /** Bucket writes deferred past the answer (`defer`), applied in order by `settled`. */
  private deferred: Array<() => Promise<void>> = [];
  private scheduled: ReturnType<typeof setImmediate> | null = null;
  private applying: Promise<void> = Promise.resolve();

  constructor(private readonly runtime: Runtime) {}

  /**
   * Runs `write` (a settle or release that must not fail: it handles its own errors) once the
   * current turn of the event loop is over, i.e. after the answer that called it is sent. Only for
   * a process alone on its database: every reader and reservation of this engine applies what is
   * deferred first, so within the process nothing sees a bucket without it, and no other process
   * reads the buckets.
   */
  defer(write: () => Promise<void>): void {
    this.deferred.push(write);
    this.scheduled ??= setImmediate(() => void this.settled());
  }

  /** Applies every deferred write; resolves when they are done. */
  settled(): Promise<void> {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    if (this.deferred.length === 0) return this.applying;
    const writes = this.deferred;
    this.deferred = [];
    this.applying = this.applying.then(async () => {
      for (const write of writes) await write();
    });
    return this.applying;
  }

  /**
   * Holds `estimate` on every spec's current bucket, or on none: a bucket admits a request while
   * `used + reserved < credit_limit`, checked and incremented in one statement. With N concurrent
   * requests at the edge of a budget, admitted usage therefore exceeds the limit by at most one
   * request's estimate (provided estimates are not below actual usage). An empty list is ok.
   */
  async reserve(specs: LimitSpec[], estimate: UsageAmount): Promise<ReserveResult> {
    await this.settled();
    const now = this.runtime.clock.now();
    // Time-ordered: one reservation row per request, appended to its primary-key index (see timeOrderedUuid).
    const reservation: Reservation = { id: timeOrderedUuid(), specs: [...specs], estimate: { ...estimate }, items: [], createdAt: now };
    if (specs.length === 0) return { ok: true, reservation, usage: [] };
    const units = specs.map((spec) => toUnits(spec.type, amountFor(spec.type, estimate)));
    const usage: BucketAmounts[] = [];
    const ensured = new Map<string, string>();
    const outcome = await this.transaction(undefined, async (tx) => {
      const items: ReservationItem[] = [];
      for (const [i, spec] of specs.entries()) {
        for (let upsert = false; ; upsert = true) {
          const { bucketId, known } = await this.bucketOf(tx, spec, now, upsert, ensured);
          const held = await exec<Row[]>(
            tx,
            'update usage_buckets set reserved = reserved + ?, updated_at = ? where id = ? and used + reserved < ? returning used, reserved',
            [units[i], now, bucketId, limitToUnits(spec.type, spec.creditLimit)],
            'all',
          );
          if (held.length === 1) {
            items.push({ bucketId, units: units[i] });
            usage.push({ currentUsage: fromUnits(spec.type, num(held[0].used)), reserved: fromUnits(spec.type, num(held[0].reserved)) });
            break;
          }
          const row = await exec<Row | undefined>(tx, 'select used, reserved from usage_buckets where id = ?', [bucketId], 'get');
          // A known bucket that is gone (removed by hand): upsert it again.
          if (!row && known) continue;
          throw new Refusal(spec, num(row?.used), num(row?.reserved));
        }
      }
      await exec(
        tx,
        "insert into usage_reservations (id, items, status, created_at, finished_at) values (?, ?, 'pending', ?, null)",
        [reservation.id, JSON.stringify(items), now],
        'run',
      );
      return items;
    }).catch((error: unknown) => {
      if (error instanceof Refusal) return error;
      throw error;
    });
    if (outcome instanceof Refusal) {
      const { spec } = outcome;
      return { ok: false, refusedBy: spec, currentUsage: fromUnits(spec.type, outcome.usedUnits), reserved: fromUnits(spec.type, outcome.reservedUnits) };
    }
    reservation.items = outcome;
    this.remember(ensured);
    return { ok: true, reservation, usage };
  }

  /**
   * Replaces the estimate by the actual usage on the reserved buckets, then raises any alert now
   * due. Exactly once per reservation: a second settle, or a settle after release, changes nothing.
   * A reservation the stale sweep gave back still has its usage counted. `withClaim` writes what
   * must commit with the settle (the caller's record of it), inside its transaction, only when this
   * call is the one that settles.
   */
  async settle(reservation: Reservation, actual: UsageAmount, withClaim?: WithClaim): Promise<void> {
    if (reservation.items.length === 0) return;
    const now = this.runtime.clock.now();
    const units = reservation.specs.map((spec) => toUnits(spec.type, amountFor(spec.type, actual)));
    const touched = await this.transaction(withClaim, async (tx, claimed) => {
      let giveBack = true;
      if (!(await this.claimReservation(tx, reservation.id, 'pending', 'settled', now))) {
        if (!(await this.claimReservation(tx, reservation.id, 'expired', 'settled', now))) return null;
        giveBack = false;
      }
      await claimed();
      const out: TouchedBucket[] = [];
      for (const [i, spec] of reservation.specs.entries()) {
        const item = reservation.items[i];
        const rows = await exec<Row[]>(
          tx,
          'update usage_buckets set used = used + ?, reserved = reserved - ?, updated_at = ? where id = ? ' +
            'returning id, value_key, period_key, used, threshold_alert_sent, exhausted_alert_sent',
          [units[i], giveBack ? item.units : 0, now, item.bucketId],
          'all',
        );
        if (rows[0]) out.push(touchedOf(spec, rows[0]));
      }
      return out;
    });
    if (!touched) {
      this.runtime.logger.warn({ reservationId: reservation.id }, 'usage reservation already settled or released; settle ignored');
      return;
    }
    await this.raiseAlerts(touched, now);
  }

  /** Gives the estimate back (the call failed before any usage). Exactly once; no-op after settle. `withClaim` as for `settle`. */
  async release(reservation: Reservation, withClaim?: WithClaim): Promise<void> {
    if (reservation.items.length === 0) return;
    const now = this.runtime.clock.now();
    await this.transaction(withClaim, async (tx, claimed) => {
      if (!(await this.claimReservation(tx, reservation.id, 'pending', 'released', now))) return;
      await claimed();
      for (const item of reservation.items) {
        await exec(tx, 'update usage_buckets set reserved = reserved - ?, updated_at = ? where id = ?', [item.units, now, item.bucketId], 'run');
      }
    });
  }

  /** Adds usage without a reservation (e.g. usage known only afterwards), then raises alerts. */
  async record(specs: LimitSpec[], actual: UsageAmount): Promise<void> {
    if (specs.length === 0) return;
    const now = this.runtime.clock.now();
    const units = specs.map((spec) => toUnits(spec.type, amountFor(spec.type, actual)));
    const touched = await this.runtime.fork().transactional(async (tx) => {
      const out: TouchedBucket[] = [];
      for (const [i, spec] of specs.entries()) {
        const bucketId = await this.ensureBucket(tx, spec, now);
        const rows = await exec<Row[]>(
          tx,
          'update usage_buckets set used = used + ?, updated_at = ? where id = ? ' +
            'returning id, value_key, period_key, used, threshold_alert_sent, exhausted_alert_sent',
          [units[i], now, bucketId],
          'all',
        );
        out.push(touchedOf(spec, rows[0]));
      }
      return out;
    });
    await this.raiseAlerts(touched, now);
  }

  /**
   * Read-only admission check (no reservation): the first spec whose current bucket is full
   * (`used + reserved >= credit_limit`). Prefer `reserve` before a model call: a check alone does
   * not keep the cap under concurrency.
   */
  async check(specs: LimitSpec[]): Promise<CheckResult> {
    await this.settled();
    const now = this.runtime.clock.now();
    const em = this.runtime.fork();
    for (const spec of specs) {
      const { used, reserved } = await this.readBucket(em, spec, now);
      if (used + reserved >= limitToUnits(spec.type, spec.creditLimit)) {
        return { ok: false, refusedBy: spec, currentUsage: fromUnits(spec.type, used), reserved: fromUnits(spec.type, reserved) };
      }
    }
    return { ok: true };
  }

  private async readBucket(em: EntityManager, spec: LimitSpec, now: Date): Promise<{ used: number; reserved: number }> {
    const row = await exec<Row | undefined>(
      em,
      'select used, reserved from usage_buckets where owner_type = ? and owner_id = ? and value_key = ? and type = ? and period_key = ?',
      [spec.ownerType, spec.ownerId, spec.valueKey, spec.type, periodKey(spec.periodicReset, now)],
      'get',
    );
    return { used: num(row?.used), reserved: num(row?.reserved) };
  }

  /** The owner's buckets of the current period, ordered by value key. */
  async currentBuckets(ownerType: LimitOwnerType, ownerId: string, filter: BucketFilter = {}): Promise<BucketUsage[]> {
    return (await this.currentBucketsOf(ownerType, [{ ownerId, ...filter }]))[0];
  }

  /** `currentBuckets` for many owners in one query (one result list per owner, same order). */
  async currentBucketsOf(ownerType: LimitOwnerType, owners: ReadonlyArray<{ ownerId: string } & BucketFilter>): Promise<BucketUsage[][]> {
    await this.settled();
    if (owners.length === 0) return [];
    const now = this.runtime.clock.now();
    const ids = [...new Set(owners.map((o) => o.ownerId))];
    const current = currentPeriodClause(now);
    const rows = await exec<Row[]>(
      this.runtime.fork(),
      `select owner_id, value_key, type, period_key, periodic_reset, used, reserved, credit_limit, threshold_alert_sent, exhausted_alert_sent
         from usage_buckets where owner_type = ? and owner_id in (${ids.map(() => '?').join(', ')}) and ${current.sql}
         order by value_key, type`,
      [ownerType, ...ids, ...current.params],
      'all',
    );
    return owners.map((owner) =>
      rows
        .filter((row) => row.owner_id === owner.ownerId)
        .filter((row) => owner.type === undefined || row.type === owner.type)
        .filter((row) => owner.periodicReset === undefined || (row.periodic_reset ?? null) === owner.periodicReset)
        .map((row) => {
          const type = row.type as LimitType;
          const used = num(row.used);
          const limit = owner.creditLimit === undefined ? num(row.credit_limit) : limitToUnits(type, owner.creditLimit);
          return {
            valueKey: String(row.value_key),
            type,
            periodKey: String(row.period_key),
            currentUsage: fromUnits(type, used),
            reserved: fromUnits(type, num(row.reserved)),
            status: bucketStatus(used, limit),
            isThresholdAlertsSent: bool(row.threshold_alert_sent),
            isExhaustedAlertsSent: bool(row.exhausted_alert_sent),
          };
        }),
    );
  }

  /**
   * A page of every value key the owner has counted usage for (in any period), ordered by value
   * key, each with its usage in the current period of `query.periodicReset` (zero when it has none
   * yet) and its status against `query.creditLimit`, with the total: paged, filtered and counted in
   * SQL, so an owner with many value keys costs one page. The status filter is `bucketStatus`'s rule
   * (`used >= limit` is exhausted) in SQL.
   */
  async valueKeyPage(ownerType: LimitOwnerType, ownerId: string, query: ValueKeyQuery): Promise<{ total: number; data: BucketUsage[] }> {
    await this.settled();
    const { type, periodicReset } = query;
    const period = periodKey(periodicReset, this.runtime.clock.now());
    const limit = limitToUnits(type, query.creditLimit);
    const current = periodicReset === null ? 'period_key = ? and periodic_reset is null' : 'period_key = ? and periodic_reset = ?';
    const currentParams = periodicReset === null ? [period] : [period, periodicReset];
    const usedNow = `sum(case when ${current} then used else 0 end)`;
    const where: { sql: string[]; params: unknown[] } = { sql: ['owner_type = ?', 'owner_id = ?', 'type = ?'], params: [ownerType, ownerId, type] };
    if (query.valueKey != null) {
      where.sql.push('value_key = ?');
      where.params.push(query.valueKey);
    }
    if (query.search) {
      where.sql.push("lower(value_key) like ? escape '\\'");
      where.params.push(`%${query.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    }
    const having = query.status ? { sql: ` having ${usedNow} ${query.status === 'exhausted' ? '>=' : '<'} ?`, params: [...currentParams, limit] } : { sql: '', params: [] };
    const grouped = `from usage_buckets where ${where.sql.join(' and ')} group by value_key${having.sql}`;
    const em = this.runtime.fork();
    const counted = await exec<Row | undefined>(em, `select count(*) as total from (select value_key ${grouped}) as value_keys`, [...where.params, ...having.params], 'get');
    const total = num(counted?.total);
    if (query.limit === 0 || total <= query.offset) return { total, data: [] };
    const rows = await exec<Row[]>(
      em,
      `select value_key, ${usedNow} as used, sum(case when ${current} then reserved else 0 end) as reserved,
         max(case when ${current} and threshold_alert_sent then 1 else 0 end) as threshold_alert_sent,
         max(case when ${current} and exhausted_alert_sent then 1 else 0 end) as exhausted_alert_sent
       ${grouped} order by value_key limit ? offset ?`,
      [...currentParams, ...currentParams, ...currentParams, ...currentParams, ...where.params, ...having.params, query.limit, query.offset],
      'all',
    );
    const data = rows.map((row) => ({
      valueKey: String(row.value_key),
      type,
      periodKey: period,
      currentUsage: fromUnits(type, num(row.used)),
      reserved: fromUnits(type, num(row.reserved)),
      status: bucketStatus(num(row.used), limit),
      isThresholdAlertsSent: bool(row.threshold_alert_sent),
      isExhaustedAlertsSent: bool(row.exhausted_alert_sent),
    }));
    return { total, data };
  }

  /**
   * Zeroes the usage of the owner's current-period bucket(s) (one value key, or all) and clears their
   * alert flags, so the limit admits requests again and alerts can fire again. Estimates of requests
   * in progress stay held. Returns how many buckets were reset.
   */
  async resetUsage(
    ownerType: LimitOwnerType,
    ownerId: string,
    valueKey?: string,
    filter: Omit<BucketFilter, 'creditLimit'> = {},
    /** A caller's transaction to reset within (one statement), so the reset commits with its other writes. */
    em: EntityManager = this.runtime.fork(),
  ): Promise<number> {
    // Deferred writes need the connection a caller's transaction holds (SQLite has one): inside one,
    // a request answered a moment ago may settle after the reset, as one still in flight would.
    if (!em.isInTransaction()) await this.settled();
    const now = this.runtime.clock.now();
    const current = currentPeriodClause(now);
    const params: unknown[] = [now, ownerType, ownerId, ...current.params];
    let sql =
      'update usage_buckets set used = 0, threshold_alert_sent = false, exhausted_alert_sent = false, updated_at = ? ' +
      `where owner_type = ? and owner_id = ? and ${current.sql}`;
    if (valueKey !== undefined) {
      sql += ' and value_key = ?';
      params.push(valueKey);
    }
    if (filter.type !== undefined) {
      sql += ' and type = ?';
      params.push(filter.type);
    }
    if (filter.periodicReset !== undefined) {
      sql += filter.periodicReset === null ? ' and periodic_reset is null' : ' and periodic_reset = ?';
      if (filter.periodicReset !== null) params.push(filter.periodicReset);
    }
    const result = await exec<{ affectedRows: number }>(em, sql, params, 'run');
    return result.affectedRows;
  }

  /** Stores new limits on the owner's buckets (they are also refreshed by every request). */
  async updateLimits(ownerType: LimitOwnerType, ownerId: string, limits: { type: LimitType; creditLimit: number; alertThreshold: number | null }): Promise<void> {
    this.knownBuckets.clear();
    await exec(
      this.runtime.fork(),
      'update usage_buckets set credit_limit = ?, alert_threshold = ? where owner_type = ? and owner_id = ? and type = ?',
      [
        limitToUnits(limits.type, limits.creditLimit),
        limits.alertThreshold === null ? null : limitToUnits(limits.type, limits.alertThreshold),
        ownerType,
        ownerId,
        limits.type,
      ],
      'run',
    );
  }

  /**
   * Gives back the estimates of reservations pending for longer than `olderThanMs` (a process that
   * died mid-call never settles or releases): they become `expired`, and a late settle still counts
   * its usage. Finished reservations older than a day are deleted. Returns how many were expired.
   */
  async sweepStaleReservations(olderThanMs: number): Promise<number> {
    await this.settled();
    const now = this.runtime.clock.now();
    const cutoff = new Date(now.getTime() - olderThanMs);
    const em = this.runtime.fork();
    const stale = await exec<Row[]>(em, "select id from usage_reservations where status = 'pending' and created_at < ? limit 500", [cutoff], 'all');
    let expired = 0;
    for (const { id } of stale) {
      const done = await this.runtime.fork().transactional(async (tx) => {
        if (!(await this.claimReservation(tx, String(id), 'pending', 'expired', now))) return false;
        const row = await exec<Row | undefined>(tx, 'select items from usage_reservations where id = ?', [id], 'get');
        const items = (typeof row?.items === 'string' ? JSON.parse(row.items) : (row?.items ?? [])) as ReservationItem[];
        for (const item of items) {
          await exec(tx, 'update usage_buckets set reserved = reserved - ?, updated_at = ? where id = ?', [item.units, now, item.bucketId], 'run');
        }
        return true;
      });
      if (done) expired++;
    }
    await exec(em, "delete from usage_reservations where status <> 'pending' and created_at < ?", [new Date(now.getTime() - 86_400_000)], 'run');
    if (expired) this.runtime.logger.warn({ expired }, 'released usage reservations that were never settled');
    return expired;
  }

  /**
   * Runs `work` in one transaction; `claimed()` writes the caller's `withClaim` in it. Begun on the
   * connection itself unless there is a `withClaim` (it writes through an EntityManager): a forked
   * manager and MikroORM's transaction manager, which forks once more, cost about as much as a
   * reservation's statements themselves. Isolation is the same either way: the connection's
   * transaction (SQLite's one connection held until it ends; PostgreSQL's transaction).
   */
  private async transaction<T>(withClaim: WithClaim | undefined, work: (tx: Tx, claimed: () => Promise<void>) => Promise<T>): Promise<T> {
    if (withClaim) return this.runtime.fork().transactional((em) => work(em, () => withClaim(em)));
    const connection = this.runtime.orm.em.getConnection();
    return connection.transactional((trx) => work(new ConnectionTx(connection, trx), nothingToClaim));
  }

  /** The spec's current bucket: a known one (see `knownBuckets`) unless `upsert`, else `ensureBucket`'s, noted in `ensured`. */
  private async bucketOf(tx: Tx, spec: LimitSpec, now: Date, upsert: boolean, ensured: Map<string, string>): Promise<{ bucketId: string; known: boolean }> {
    const key = this.runtime.instances.alone ? bucketKey(spec, now) : null;
    const known = key === null || upsert ? undefined : this.knownBuckets.get(key);
    if (known) return { bucketId: known, known: true };
    const bucketId = await this.ensureBucket(tx, spec, now);
    if (key !== null) ensured.set(key, bucketId);
    return { bucketId, known: false };
  }

  /** Buckets a committed reservation upserted (a rolled-back upsert may have created none). */
  private remember(ensured: Map<string, string>): void {
    for (const [key, bucketId] of ensured) {
      this.knownBuckets.delete(key);
      setBounded(this.knownBuckets, key, bucketId, KNOWN_BUCKETS_LIMIT);
    }
  }

  /** The bucket row for the spec's current period, created if missing, with the spec's limits stored. */
  private async ensureBucket(tx: Tx, spec: LimitSpec, now: Date): Promise<string> {
    const rows = await exec<Row[]>(
      tx,
      'insert into usage_buckets (id, owner_type, owner_id, value_key, period_key, periodic_reset, type, used, reserved, credit_limit, alert_threshold, ' +
        'threshold_alert_sent, exhausted_alert_sent, workspace_id, created_at, updated_at) ' +
        'values (?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, false, false, ?, ?, ?) ' +
        'on conflict (owner_type, owner_id, value_key, type, period_key) do update set ' +
        'credit_limit = excluded.credit_limit, alert_threshold = excluded.alert_threshold, workspace_id = excluded.workspace_id ' +
        'returning id',
      [
        uuid(),
        spec.ownerType,
        spec.ownerId,
        spec.valueKey,
        periodKey(spec.periodicReset, now),
        spec.periodicReset,
        spec.type,
        limitToUnits(spec.type, spec.creditLimit),
        spec.alertThreshold === null ? null : limitToUnits(spec.type, spec.alertThreshold),
        spec.workspaceId,
        now,
        now,
      ],
      'all',
    );
    return String(rows[0].id);
  }

  private async claimReservation(tx: Tx, id: string, from: string, to: string, now: Date): Promise<boolean> {
    const result = await exec<{ affectedRows: number }>(
      tx,
      'update usage_reservations set status = ?, finished_at = ? where id = ? and status = ?',
      [to, now, id, from],
      'run',
    );
    return result.affectedRows === 1;
  }

  /**
   * Raises what `decideAlerts` says is due, each only after winning its flag
   * (`set flag = true where flag = false`): concurrent increments raise one alert, not several.
   * Failures here are logged, never thrown: the usage is already counted.
   */
  private async raiseAlerts(touched: TouchedBucket[], now: Date): Promise<void> {
    for (const bucket of touched) {
      const { spec } = bucket;
      const decision = decideAlerts({
        usage: bucket.used,
        creditLimit: limitToUnits(spec.type, spec.creditLimit),
        alertThreshold: spec.alertThreshold === null ? null : limitToUnits(spec.type, spec.alertThreshold),
        isThresholdAlertsSent: bucket.thresholdAlertSent,
        isExhaustedAlertsSent: bucket.exhaustedAlertSent,
      });
      try {
        if (decision.raiseThresholdAlert && (await this.claimFlag(bucket.bucketId, 'threshold_alert_sent'))) {
          await this.publishAlert('threshold', bucket, now);
        }
        if (decision.raiseExhaustedAlert && (await this.claimFlag(bucket.bucketId, 'exhausted_alert_sent'))) {
          await this.publishAlert('exhausted', bucket, now);
        }
      } catch (error) {
        this.runtime.logger.error({ err: error, bucketId: bucket.bucketId }, 'usage alert failed');
      }
    }
  }

  private async claimFlag(bucketId: string, flag: 'threshold_alert_sent' | 'exhausted_alert_sent'): Promise<boolean> {
    const result = await exec<{ affectedRows: number }>(
      this.runtime.fork(),
      `update usage_buckets set ${flag} = true where id = ? and ${flag} = false`,
      [bucketId],
      'run',
    );
    return result.affectedRows === 1;
  }

  private async publishAlert(kind: UsageAlertKind, bucket: TouchedBucket, now: Date): Promise<void> {
    const { spec } = bucket;
    const currentUsage = fromUnits(spec.type, bucket.used);
    const message =
      kind === 'threshold'
        ? `Usage alert: ${spec.label} passed its alert threshold of ${formatAmount(spec.type, spec.alertThreshold ?? 0)} for '${bucket.valueKey}': ` +
          `${formatAmount(spec.type, currentUsage)} of ${formatAmount(spec.type, spec.creditLimit)} used.`
        : `Usage limit reached: ${spec.label} has used ${formatAmount(spec.type, currentUsage)} of ${formatAmount(spec.type, spec.creditLimit)} ` +
          `for '${bucket.valueKey}'; further requests are refused until ${spec.periodicReset ? 'the next period or ' : ''}a reset.`;
    const event: UsageAlertEvent = {
      id: uuid(),
      kind,
      ownerType: spec.ownerType,
      ownerId: spec.ownerId,
      label: spec.label,
      valueKey: bucket.valueKey,
      periodKey: bucket.periodKey,
      type: spec.type,
      currentUsage,
      creditLimit: spec.creditLimit,
      alertThreshold: spec.alertThreshold,
      workspaceId: spec.workspaceId,
      message,
      createdAt: now,
    };
    const em = this.runtime.fork();
    // The stored row is the published event (less its label, which is derived) plus its bucket.
    const { label: _label, ...row } = event;
    await em.insert(UsageAlertSchema, { ...row, bucketId: bucket.bucketId });
    this.runtime.logger.warn({ event: 'usage_alert', alert: { ...event, createdAt: now.toISOString() } }, message);
    if (spec.workspaceId) this.runtime.pubsub.publish(usageAlertsTopic(spec.workspaceId), event);
  }
}

/**
 * What `ensureBucket` writes for the spec now: equal keys need no second upsert. Joined with NUL
 * rather than JSON (a reservation's cost): the value key, the only part holding request data, comes
 * last, and no part before it can hold a NUL (ids, enums, a derived period, numbers) nor be empty,
 * which the nulls are written as, so two different specs never share a key.
 */
function bucketKey(spec: LimitSpec, now: Date): string {
  return [
    spec.ownerType,
    spec.ownerId,
    spec.type,
    periodKey(spec.periodicReset, now),
    spec.periodicReset ?? '',
    spec.creditLimit,
    spec.alertThreshold ?? '',
    spec.workspaceId ?? '',
    spec.valueKey,
  ].join('\u0000');
}

function touchedOf(spec: LimitSpec, row: Row): TouchedBucket {
  return {
    spec,
    bucketId: String(row.id),
    valueKey: String(row.value_key),
    periodKey: String(row.period_key),
    used: num(row.used),
    thresholdAlertSent: bool(row.threshold_alert_sent),
    exhaustedAlertSent: bool(row.exhausted_alert_sent),
  };
}

/** Rows of the period that contains `now`, each by its own reset rule. */
function currentPeriodClause(now: Date): { sql: string; params: unknown[] } {
  return {
    sql: "((periodic_reset = 'monthly' and period_key = ?) or (periodic_reset = 'weekly' and period_key = ?) or (periodic_reset is null and period_key = ?))",
    params: [periodKey('monthly', now), periodKey('weekly', now), periodKey(null, now)],
  };
}

/** A transaction begun on the connection itself (`UsageEngine.transaction`), without an EntityManager. */
class ConnectionTx {
  constructor(
    readonly connection: Connection,
    readonly trx: Transaction,
  ) {}
}

/** Where a statement runs: a manager (in its transaction when it has one), or a ConnectionTx. */
type Tx = EntityManager | ConnectionTx;

const nothingToClaim = async (): Promise<void> => {};

const exec = <T>(tx: Tx, sql: string, params: unknown[], method: 'all' | 'get' | 'run'): Promise<T> =>
  tx instanceof ConnectionTx ? tx.connection.execute<T & object>(sql, params, method, tx.trx) : executeSql<T>(tx, sql, params, method);

/** The app's one engine. */
export function usageEngine(runtime: Runtime): UsageEngine {
  return runtime.singleton('usage-engine', () => new UsageEngine(runtime));
}
