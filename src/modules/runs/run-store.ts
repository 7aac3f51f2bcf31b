/**
 * The writes every actor on a run shares (requests, the executor, the expiry sweep, startup
 * recovery): conditional status moves, closing a run's open steps and messages, and the commit
 * that publishes the run's new events and reports finished runs to the hooks afterwards.
 */
import { JsonType, ReferenceKind, type EntityManager, type EntitySchema } from '@mikro-orm/core';
import { boundSql, InsertTexts } from '../../db/sql.js';
import { unixSeconds } from '../../lib/clock.js';
import type { Runtime } from '../../runtime.js';
import { onRunFinished, type RunSummary } from './admission.js';
import { execute, insertEvents, numberEvents, numberHeldEvents, publishEvents, RunMovedError, startPublishedLog, type EventDraft, type RunEventRecord } from './event-log.js';
import { MessageSchema } from './message.entity.js';
import { moveEndsLease } from './run-lease.js';
import { stepErrorOf } from './models/model.js';
import { RunStepSchema, type StepStatus } from './run-step.entity.js';
import { RunSchema, type Run } from './run.entity.js';
import { isTerminal, transition, type RunLifecycle, type RunStatus } from './run-state.js';
import { messageObject, runObject, runStepObject, runUsage } from './wire.js';

export function runSummary(run: Run): RunSummary {
  return {
    id: run.id,
    organisationId: run.organisationId,
    workspaceId: run.workspaceId,
    threadId: run.threadId,
    assistantId: run.assistantId,
    status: run.status,
    model: run.model,
    virtualKey: run.virtualKey,
    providerId: run.providerId ?? null,
    apiKeyId: run.apiKeyId ?? null,
    metadata: run.metadata,
  };
}

/** An entity written by a run's transaction with `RunTx.insert`, and its rows. */
type Inserted = { schema: EntitySchema<any>; rows: object[] };

/** What a transaction on runs collects, to act on once it has committed. */
export class RunTx {
  readonly published: { runId: string; records: RunEventRecord[] }[] = [];
  /** Rows to insert at the end of the transaction, by entity (see `insert`). */
  readonly inserts = new Map<string, Inserted>();
  readonly finished: Run[] = [];
  /** Runs this transaction moved: it holds their rows until it ends (see `move`). */
  private readonly held = new Map<string, Run>();

  constructor(
    readonly tx: EntityManager,
    readonly runtime: Runtime,
  ) {}

  now(): Date {
    return this.runtime.clock.now();
  }

  /**
   * Inserts `row`, a plain object with every property of `schema`'s entity, at the end of the
   * transaction with the others of its entity: its state then is what is written, so a row
   * opened and changed in one transaction costs one INSERT. The executor's message and step rows
   * go this way rather than through the unit of work, whose change sets and per-entity bookkeeping
   * cost more than the whole statement on the run path.
   */
  insert<T extends object>(schema: EntitySchema<T>, row: T): T {
    const name = schema.meta.className;
    const entry: Inserted = this.inserts.get(name) ?? { schema, rows: [] };
    entry.rows.push(row);
    this.inserts.set(name, entry);
    return row;
  }

  /** Writes `row` back, every column but those fixed at creation, by its key (one UPDATE): a row of `schema` an earlier transaction inserted, changed since. */
  update<T extends object>(schema: EntitySchema<T>, row: T): Promise<void> {
    return updateRow(this.tx, schema, row);
  }

  /**
   * Appends `drafts` to the run's log (only while it is `whileStatus`, if given; else RunMovedError).
   * A run this transaction holds is numbered from its known count, with no statement of its own.
   */
  async events(runId: string, drafts: EventDraft[], whileStatus?: RunStatus): Promise<RunEventRecord[]> {
    const held = this.held.get(runId);
    if (held && whileStatus && held.status !== whileStatus) throw new RunMovedError(runId);
    const records = held ? numberHeldEvents(held, drafts) : await numberEvents(this.tx, runId, drafts, whileStatus);
    this.published.push({ runId, records });
    return records;
  }

  /** The first events of a run this transaction creates, before its flush (see numberHeldEvents). */
  firstEvents(run: Run, drafts: EventDraft[]): RunEventRecord[] {
    startPublishedLog(this.runtime, run.id);
    const records = numberHeldEvents(run, drafts);
    this.published.push({ runId: run.id, records });
    return records;
  }

  /**
   * Moves the run from `from` to `to` if it is still in `from` (one conditional UPDATE: of two
   * racing writers exactly one wins), and stamps the lifecycle fields. Null when it was not.
   * Terminal moves also free the thread and are reported to the run-finished hooks. A move that
   * ends the executing job's part also clears the run's lease (run-lease.ts).
   *
   * The UPDATE returns the row, which this transaction then holds until it ends: a later move or
   * event append on the same run in it reads the held run instead of asking the database again
   * (what it knows is what the database has, no other writer can change the row meanwhile), and
   * `writeHeld` writes it all in one UPDATE when the transaction ends. The held run is a plain
   * object, not an entity of the unit of work: hydrating the row into a managed entity and diffing
   * it at flush cost more CPU than the rest of the run's statements together.
   */
  async move(runId: string, from: RunStatus, to: RunStatus): Promise<Run | null> {
    let run = this.held.get(runId);
    if (run) {
      if (run.status !== from) return null;
      if (moveEndsLease(to)) {
        run.leaseOwner = null;
        run.leaseExpiresAt = null;
      }
    } else {
      const rows = moveEndsLease(to)
        ? await boundSql<Record<string, unknown>[]>(this.tx, 'update runs set status = ?, lease_owner = null, lease_expires_at = null where id = ? and status = ? returning *', [to, runId, from])
        : await boundSql<Record<string, unknown>[]>(this.tx, 'update runs set status = ? where id = ? and status = ? returning *', [to, runId, from]);
      if (rows.length !== 1) return null;
      run = runOfRow(this.tx, rows[0]);
      this.held.set(runId, run);
    }
    const now = this.now();
    applyLifecycle(run, transition(lifecycleOf(run, from), to, unixSeconds(now)), now);
    run.status = to;
    run.updatedAt = now;
    if (to !== 'requires_action') run.requiredToolCalls = null;
    if (isTerminal(to)) {
      await execute(this.tx, 'update threads set active_run_id = null where id = ? and active_run_id = ?', [run.threadId, run.id]);
      this.finished.push(run);
    }
    // Written when the transaction ends (writeHeld): one UPDATE for all its changes.
    return run;
  }

  /** Every run this transaction moved, written back in one UPDATE each, with whatever was changed on it since. */
  async writeHeld(): Promise<void> {
    for (const run of this.held.values()) await updateRow(this.tx, RunSchema, run);
  }

  /** Drops the runs this transaction moved from `em`'s identity map: a later read there asks the database. */
  forgetHeld(em: EntityManager): void {
    const uow = em.getUnitOfWork();
    for (const id of this.held.keys()) {
      const stale = uow.getById<Run>(RunSchema.meta.className, id);
      if (stale) uow.unsetIdentity(stale);
    }
  }

  /**
   * Ends the run's open work when it stops abnormally: in-progress messages become incomplete
   * (`run_cancelled`, `run_failed`, `run_expired`), in-progress steps take the run's fate.
   * Returns the events, in the order they must be sent (messages, then steps).
   */
  async closeOpenWork(run: Run, fate: 'cancelled' | 'failed' | 'expired'): Promise<EventDraft[]> {
    const now = this.now();
    const drafts: EventDraft[] = [];
    const messages = await this.tx.find(MessageSchema, { runId: run.id, status: 'in_progress' }, { orderBy: { ordinal: 'asc' } });
    for (const message of messages) {
      message.status = 'incomplete';
      message.incompleteDetails = { reason: `run_${fate}` };
      message.incompleteAt = now;
      drafts.push({ event: 'thread.message.incomplete', data: messageObject(message) });
    }
    const steps = await this.tx.find(RunStepSchema, { runId: run.id, status: 'in_progress' }, { orderBy: { ordinal: 'asc' } });
    for (const step of steps) {
      step.status = fate as StepStatus;
      if (fate === 'cancelled') step.cancelledAt = now;
      if (fate === 'failed') {
        step.failedAt = now;
        step.lastError = stepErrorOf(run.lastError ?? null);
      }
      if (fate === 'expired') step.expiredAt = now;
      drafts.push({ event: `thread.run.step.${fate}`, data: runStepObject(step) });
    }
    await this.tx.flush();
    return drafts;
  }
}

/**
 * Runs `work` in one transaction; after the commit, publishes the events it appended (in order)
 * and tells the hooks about runs it finished. Nothing is published for a rolled-back transaction.
 */
export async function commitRun<T>(runtime: Runtime, em: EntityManager, work: (rtx: RunTx) => Promise<T>): Promise<T> {
  let scope!: RunTx;
  const result = await em.transactional(async (tx) => {
    scope = new RunTx(tx, runtime);
    const value = await work(scope);
    await scope.writeHeld();
    for (const { schema, rows } of scope.inserts.values()) await insertRows(tx, schema, rows);
    // Every event the transaction appended, in one statement before its commit.
    await insertEvents(tx, scope.now(), scope.published);
    return value;
  });
  scope.forgetHeld(em);
  for (const { runId, records } of scope.published) publishEvents(runtime, runId, records);
  for (const run of scope.finished) await onRunFinished(runtime, runSummary(run), runUsage(run));
  return result;
}

/** An entity's INSERT and UPDATE texts, and which of its columns hold JSON (written as text). */
interface RowPlan {
  props: { name: string; json: boolean }[];
  inserts: InsertTexts;
  /** The UPDATE of every column but those FIXED_AT_CREATION, by key; the properties it sets, then the key's property. */
  update: string;
  updated: { name: string; json: boolean }[];
  key: string;
}
const rowPlans = new WeakMap<object, RowPlan>();

/**
 * Properties of a run, message or step fixed when its row is inserted: its tenancy, the thread,
 * run and assistant it belongs to, its place in their order, its creation time. `updateRow`
 * leaves them out: SQLite rewrites an index's entry for every column an UPDATE sets, changed or
 * not, so writing them back rewrote four index pages of `runs` (organisation, workspace, thread,
 * ordinal) in every transaction that moved a run.
 */
const FIXED_AT_CREATION = new Set(['organisationId', 'workspaceId', 'threadId', 'runId', 'assistantId', 'ordinal', 'createdAt']);

function rowPlan(tx: EntityManager, schema: EntitySchema<any>): RowPlan {
  const meta = tx.getMetadata().get(schema.meta.className);
  let plan = rowPlans.get(meta);
  if (!plan) {
    const props = meta.props.filter((prop) => prop.persist !== false && prop.kind === ReferenceKind.SCALAR);
    const key = props.find((prop) => prop.primary)!;
    const updated = props.filter((prop) => prop !== key && !FIXED_AT_CREATION.has(prop.name));
    const written = (prop: (typeof props)[number]) => ({ name: prop.name, json: prop.customType instanceof JsonType });
    plan = {
      props: props.map(written),
      inserts: new InsertTexts(meta.tableName, props.map((prop) => prop.fieldNames[0])),
      update: `update ${meta.tableName} set ${updated.map((prop) => `${prop.fieldNames[0]} = ?`).join(', ')} where ${key.fieldNames[0]} = ?`,
      updated: updated.map(written),
      key: key.name,
    };
    rowPlans.set(meta, plan);
  }
  return plan;
}

/** Appends `row`'s values of `props` to `params` as bound in a statement (json as text, as the unit of work writes it). */
function pushBound(params: unknown[], row: object, props: readonly { name: string; json: boolean }[]): void {
  for (let i = 0; i < props.length; i++) {
    const { name, json } = props[i];
    const value = (row as Record<string, unknown>)[name];
    params.push(value == null ? null : json ? JSON.stringify(value) : value);
  }
}

/** One multi-row INSERT of `rows` (plain objects of the entity's scalar properties), values bound. */
async function insertRows(tx: EntityManager, schema: EntitySchema<any>, rows: object[]): Promise<void> {
  const plan = rowPlan(tx, schema);
  const params: unknown[] = [];
  for (let i = 0; i < rows.length; i++) pushBound(params, rows[i], plan.props);
  await boundSql(tx, plan.inserts.of(rows.length), params, 'run');
}

/** One UPDATE of every column of `row` (a plain object of the entity's scalar properties) by its key, but those FIXED_AT_CREATION. */
async function updateRow(tx: EntityManager, schema: EntitySchema<any>, row: object): Promise<void> {
  const plan = rowPlan(tx, schema);
  const params: unknown[] = [];
  pushBound(params, row, plan.updated);
  // The key as it is: a missing one fails the statement rather than updating no row.
  params.push((row as Record<string, unknown>)[plan.key]);
  await boundSql(tx, plan.update, params, 'run');
}

/**
 * A run's row as `returning *` gives it → the Run, converted as the ORM hydrates it (column names
 * to properties, dates, booleans, json and bigint types) but not managed by the unit of work.
 */
export function runOfRow(tx: EntityManager, row: Record<string, unknown>): Run {
  const meta = tx.getMetadata().get(RunSchema.meta.className);
  const data = tx.getDriver().mapResult(row, meta) as Record<string, unknown>;
  const platform = tx.getPlatform();
  for (const prop of meta.props) {
    const value = data[prop.name];
    if (prop.customType && value != null) data[prop.name] = prop.customType.convertToJSValue(value, platform);
  }
  return data as Run;
}

function lifecycleOf(run: Run, status: RunStatus): RunLifecycle {
  const s = (d: Date | null | undefined) => (d ? unixSeconds(d) : null);
  return {
    status,
    expires_at: s(run.expiresAt),
    started_at: s(run.startedAt),
    cancelled_at: s(run.cancelledAt),
    failed_at: s(run.failedAt),
    completed_at: s(run.completedAt),
  };
}

function applyLifecycle(run: Run, next: RunLifecycle, now: Date): void {
  if (next.started_at !== null && !run.startedAt) run.startedAt = now;
  if (next.completed_at !== null && !run.completedAt) run.completedAt = now;
  if (next.failed_at !== null && !run.failedAt) run.failedAt = now;
  if (next.cancelled_at !== null && !run.cancelledAt) run.cancelledAt = now;
  if (next.expires_at === null) run.expiresAt = null;
}

/** `thread.run.<status>` with the run as it now is. */
export function runEvent(run: Run): EventDraft {
  return { event: `thread.run.${run.status}`, data: runObject(run) };
}

/**
 * Settles a cancel: `cancelling → cancelled`, closing the run's open work. A no-op when the run is
 * not (or no longer) cancelling, so the executor and the cancel request may both call it.
 */
export async function settleCancelled(runtime: Runtime, runId: string): Promise<boolean> {
  return commitRun(runtime, runtime.fork(), async (rtx) => {
    const run = await rtx.move(runId, 'cancelling', 'cancelled');
    if (!run) return false;
    const drafts = await rtx.closeOpenWork(run, 'cancelled');
    await rtx.events(runId, [...drafts, runEvent(run)]);
    return true;
  });
}

/** `requires_action → expired` for a run past its `expires_at`; false when another writer moved it first. */
export async function expireRun(runtime: Runtime, runId: string): Promise<boolean> {
  return commitRun(runtime, runtime.fork(), async (rtx) => {
    const run = await rtx.move(runId, 'requires_action', 'expired');
    if (!run) return false;
    const drafts = await rtx.closeOpenWork(run, 'expired');
    await rtx.events(runId, [...drafts, runEvent(run)]);
    return true;
  });
}

/** Fails a run that is `from` (executor errors, startup recovery), closing its open work. */
export async function failRun(
  runtime: Runtime,
  runId: string,
  from: RunStatus,
  lastError: { code: string; message: string },
): Promise<boolean> {
  return commitRun(runtime, runtime.fork(), async (rtx) => {
    const run = await rtx.move(runId, from, 'failed');
    if (!run) return false;
    run.lastError = lastError;
    await rtx.tx.flush();
    const drafts = await rtx.closeOpenWork(run, 'failed');
    await rtx.events(runId, [...drafts, runEvent(run)]);
    return true;
  });
}
