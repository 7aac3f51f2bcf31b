/**
 * The per-run event log: append inside the transaction that makes the change, publish after the
 * commit, read for replays. Sequence numbers come from an atomic increment of `runs.event_seq`
 * in that same transaction, so they are gap-free, ordered like the commits, and never reused.
 */
import type { EntityManager } from '@mikro-orm/core';
import { boundSql, InsertTexts } from '../../db/sql.js';
import { setBounded } from '../../lib/bounded-map.js';
import { jsonText } from '../../lib/json-text.js';
import type { Runtime } from '../../runtime.js';
import { RunEventSchema } from './run-event.entity.js';
import { isRunStatus, isTerminal, type RunStatus } from './run-state.js';

export interface EventDraft {
  event: string;
  data: unknown;
}

/** One logged event, as published and as replayed. */
export interface RunEventRecord {
  sequence: number;
  event: string;
  data: unknown;
}

export const runEventsTopic = (runId: string) => `runEvents:${runId}`;

/** The run is no longer in the status the writer expected (cancelled, expired…): its write is void. */
export class RunMovedError extends Error {
  override readonly name = 'RunMovedError';
  constructor(readonly runId: string) {
    super(`Run ${runId} changed status under its writer.`);
  }
}

/** Runs raw SQL inside the EntityManager's transaction (a second connection would wait forever); rows changed. */
export async function execute(em: EntityManager, sql: string, params: unknown[]): Promise<number> {
  const result = await boundSql<{ affectedRows?: number }>(em, sql, params, 'run');
  return result.affectedRows ?? 0;
}

/**
 * Numbers events for a run's log inside `tx`, by one atomic increment of the run's count. With
 * `whileStatus`, only while the run still has that status (else RunMovedError and the caller's
 * transaction rolls back). The rows are written by `insertEvents` before the transaction ends.
 */
export async function numberEvents(tx: EntityManager, runId: string, drafts: readonly EventDraft[], whileStatus?: RunStatus): Promise<RunEventRecord[]> {
  if (drafts.length === 0) return [];
  const rows = whileStatus
    ? await boundSql<{ seq: number }[]>(tx, 'update runs set event_seq = event_seq + ? where id = ? and status = ? returning event_seq as seq', [drafts.length, runId, whileStatus])
    : await boundSql<{ seq: number }[]>(tx, 'update runs set event_seq = event_seq + ? where id = ? returning event_seq as seq', [drafts.length, runId]);
  if (rows.length !== 1) throw new RunMovedError(runId);
  const first = Number(rows[0].seq) - drafts.length + 1;
  return drafts.map((draft, i) => ({ sequence: first + i, event: draft.event, data: draft.data }));
}

/**
 * Numbers events for the log of a run whose row `tx` holds, not yet written: one it creates, or
 * one it moved (RunTx.move). They are numbered on from the row's own count, which the
 * transaction's flush writes, so no increment is asked of the database.
 */
export function numberHeldEvents(run: { eventSeq: number }, drafts: readonly EventDraft[]): RunEventRecord[] {
  const records = drafts.map((draft, i) => ({ sequence: run.eventSeq + i + 1, event: draft.event, data: draft.data }));
  run.eventSeq += drafts.length;
  return records;
}

/** Rows per INSERT: few enough for any database's bound-value limit (5 values a row). */
const EVENTS_PER_INSERT = 200;
const EVENT_COLUMNS = ['run_id', 'sequence', 'event', 'data', 'created_at'];
const EVENT_INSERTS = new InsertTexts('run_events', EVENT_COLUMNS, 32);

/**
 * Writes numbered events inside `tx`: a transaction's events of every run, in one multi-row
 * INSERT (a stream's pause can hold hundreds of deltas: then one per EVENTS_PER_INSERT). Each
 * payload is serialised here, once, exactly as it is stored (RunEventSchema.data); its SSE frame
 * reuses the text (jsonText).
 */
export async function insertEvents(tx: EntityManager, now: Date, batches: readonly { runId: string; records: readonly RunEventRecord[] }[]): Promise<void> {
  const params: unknown[] = [];
  for (const { runId, records } of batches) for (const r of records) params.push(runId, r.sequence, r.event, jsonText(r.data), now);
  const perInsert = EVENTS_PER_INSERT * EVENT_COLUMNS.length;
  for (let start = 0; start < params.length; start += perInsert) {
    const chunk = params.length <= perInsert ? params : params.slice(start, start + perInsert);
    await boundSql(tx, EVENT_INSERTS.of(chunk.length / EVENT_COLUMNS.length), chunk, 'run');
  }
}

/** Publishes a transaction's events of one run, in order (the topic's name is made once for all of them). */
export function publishEvents(runtime: Runtime, runId: string, records: readonly RunEventRecord[]): void {
  keepPublished(runtime, runId, records);
  const topic = runEventsTopic(runId);
  for (const record of records) runtime.pubsub.publish(topic, record);
}

/**
 * The log of each run created here since start, as published, while it is going: a follower
 * starting on one of them (a streamed run's own request, first of all) takes its catch-up from
 * here rather than reading the log back (see RunFollower). Kept only by a process alone on its
 * database (SQLite): then every event of the run is committed and published by this process, so
 * what was published is the log, less what was committed and is about to be published, which
 * reaches the follower live. A run's log starts when the transaction that creates it numbers its
 * first events (`startPublishedLog`, before its commit: nothing of the run can be published
 * earlier) and is dropped at the run's end, at a publication out of order (what was published
 * before it would be missing), past PUBLISHED_EVENTS_LIMIT events, or beyond the PUBLISHED_RUNS_LIMIT newest.
 * A run not (or no longer) kept is read from the database.
 */
const publishedLogs = (runtime: Runtime) => runtime.singleton('runs.publishedLogs', () => new Map<string, RunEventRecord[]>());
/**
 * Bounds on what is kept: only runs that have not ended keep a log, and most of them hold a few
 * events (queued, waiting for tool outputs); one streaming a long answer stops being kept past
 * PUBLISHED_EVENTS_LIMIT (a follower joining then reads the database, as any late one may).
 */
const PUBLISHED_RUNS_LIMIT = 1_000;
const PUBLISHED_EVENTS_LIMIT = 200;

/** A run created by a transaction of this process: its published events are kept from its first. */
export function startPublishedLog(runtime: Runtime, runId: string): void {
  if (runtime.instances.alone) setBounded(publishedLogs(runtime), runId, [], PUBLISHED_RUNS_LIMIT);
}

function keepPublished(runtime: Runtime, runId: string, records: readonly RunEventRecord[]): void {
  const logs = publishedLogs(runtime);
  const log = logs.get(runId);
  if (!log) return;
  for (const record of records) {
    if (record.sequence !== log.length + 1 || log.length >= PUBLISHED_EVENTS_LIMIT || endsRun(record.event)) {
      logs.delete(runId);
      return;
    }
    log.push(record);
  }
}

/**
 * The run's events after `after` as this process published them (all that is committed but what
 * is about to be published), or null when it does not keep the run's log (read it from the database).
 */
export function publishedEvents(runtime: Runtime, runId: string, after: number): readonly RunEventRecord[] | null {
  const log = publishedLogs(runtime).get(runId);
  return log ? log.slice(Math.max(0, after)) : null;
}

/**
 * The run's events after `after`, in order (at most `limit`). One bound statement rather than an
 * entity query: every stream of a run starts with this read (a streamed run's request waits for
 * it before its first frame), and the ORM's query building and entity hydration cost more than
 * the statement. `data` is converted as the ORM hydrates it (text on SQLite, parsed by pg).
 */
export async function readEvents(em: EntityManager, runId: string, after: number, limit?: number): Promise<RunEventRecord[]> {
  const sql = 'select sequence, event, data from run_events where run_id = ? and sequence > ? order by sequence';
  const rows = limit === undefined
    ? await boundSql<{ sequence: number; event: string; data: unknown }[]>(em, sql, [runId, after])
    : await boundSql<{ sequence: number; event: string; data: unknown }[]>(em, `${sql} limit ?`, [runId, after, limit]);
  const json = em.getMetadata().get(RunEventSchema.meta.className).properties.data.customType!;
  const platform = em.getPlatform();
  return rows.map((row) => ({ sequence: Number(row.sequence), event: row.event, data: json.convertToJSValue(row.data, platform) }));
}

const RUN_STATUS_EVENT = /^thread\.run\.([a-z_]+)$/;

/**
 * Statuses by event name. Every follower of a run asks about each event it delivers (1,000
 * followers: 1,000 times per event), and the names are the few the executor writes.
 */
const statusByEvent = new Map<string, RunStatus | null>();

/** The run status an event announces (`thread.run.completed` → completed), if it is a run event. */
export function statusOfEvent(event: string): RunStatus | null {
  let status = statusByEvent.get(event);
  if (status === undefined) {
    const m = RUN_STATUS_EVENT.exec(event);
    status = m && isRunStatus(m[1]) ? m[1] : null;
    setBounded(statusByEvent, event, status, 64);
  }
  return status;
}

/** A terminal run event: every stream of the run ends after it. */
export function endsRun(event: string): boolean {
  const status = statusOfEvent(event);
  return status !== null && isTerminal(status);
}
