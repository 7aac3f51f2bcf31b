/**
 * The per-run event log: append inside the transaction that makes the change, publish after the
 * commit, read for replays. Sequence numbers come from an atomic increment of `runs.event_seq`
 * in that same transaction, so they are gap-free, ordered like the commits, and never reused.
 */
import { executeSql } from '../../db/sql.js';
import type { EntityManager } from '@mikro-orm/core';
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

/** Runs raw SQL inside the EntityManager's transaction (a second connection would wait forever). */
export async function execute(em: EntityManager, sql: string, params: unknown[]): Promise<number> {
  const result = await executeSql<{ affectedRows?: number }>(em, sql, params, 'run');
  return result.affectedRows ?? 0;
}

/**
 * Appends events to a run's log inside `tx`. With `whileStatus`, the append happens only while
 * the run still has that status (else RunMovedError and the caller's transaction rolls back).
 */
export async function appendEvents(
  tx: EntityManager,
  runtime: Runtime,
  runId: string,
  drafts: readonly EventDraft[],
  whileStatus?: RunStatus,
): Promise<RunEventRecord[]> {
  if (drafts.length === 0) return [];
  const rows = whileStatus
    ? await executeSql<{ seq: number }[]>(tx, 'update runs set event_seq = event_seq + ? where id = ? and status = ? returning event_seq as seq', [drafts.length, runId, whileStatus])
    : await executeSql<{ seq: number }[]>(tx, 'update runs set event_seq = event_seq + ? where id = ? returning event_seq as seq', [drafts.length, runId]);
  if (rows.length !== 1) throw new RunMovedError(runId);
  const last = Number(rows[0].seq);
  const first = last - drafts.length + 1;
  const now = runtime.clock.now();
  const records = drafts.map((draft, i) => ({ sequence: first + i, event: draft.event, data: draft.data }));
  for (const record of records) tx.create(RunEventSchema, { runId, ...record, createdAt: now });
  await tx.flush();
  return records;
}

/**
 * Appends events to the log of a run whose row `tx` holds, not yet written: one it creates, or one
 * it moved (RunTx.move). They are numbered on from the row's own count, which the same flush
 * writes with them, so no increment is asked of the database.
 */
export function appendHeldEvents(tx: EntityManager, runtime: Runtime, run: { id: string; eventSeq: number }, drafts: readonly EventDraft[]): RunEventRecord[] {
  const now = runtime.clock.now();
  const records = drafts.map((draft, i) => ({ sequence: run.eventSeq + i + 1, event: draft.event, data: draft.data }));
  run.eventSeq += drafts.length;
  for (const record of records) tx.create(RunEventSchema, { runId: run.id, ...record, createdAt: now });
  return records;
}

export function publishEvents(runtime: Runtime, runId: string, records: readonly RunEventRecord[]): void {
  for (const record of records) runtime.pubsub.publish(runEventsTopic(runId), record);
}

export async function readEvents(em: EntityManager, runId: string, after: number, limit?: number): Promise<RunEventRecord[]> {
  const rows = await em.find(
    RunEventSchema,
    { runId, sequence: { $gt: after } },
    { orderBy: { sequence: 'asc' }, limit, fields: ['sequence', 'event', 'data'] },
  );
  return rows.map((row) => ({ sequence: row.sequence, event: row.event, data: row.data }));
}

const RUN_STATUS_EVENT = /^thread\.run\.([a-z_]+)$/;

/** The run status an event announces (`thread.run.completed` → completed), if it is a run event. */
export function statusOfEvent(event: string): RunStatus | null {
  const m = RUN_STATUS_EVENT.exec(event);
  return m && isRunStatus(m[1]) ? m[1] : null;
}

/** A terminal run event: every stream of the run ends after it. */
export function endsRun(event: string): boolean {
  const status = statusOfEvent(event);
  return status !== null && isTerminal(status);
}
