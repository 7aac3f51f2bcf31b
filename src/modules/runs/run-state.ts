/**
 * The run lifecycle (docs/contract.md#run-lifecycle) as data plus a few pure functions, so the executor, the
 * service and the read paths all apply one set of rules (no ORM, no clock of its own).
 */

export const RUN_STATUSES = [
  'queued',
  'in_progress',
  'requires_action',
  'cancelling',
  'cancelled',
  'failed',
  'completed',
  'incomplete',
  'expired',
] as const;

export type RunStatus = (typeof RUN_STATUSES)[number];

/** A run waiting for tool outputs expires this long after its creation. */
export const EXPIRY_SECONDS = 600;

export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>([
  'completed',
  'failed',
  'cancelled',
  'expired',
  'incomplete',
]);

/**
 * Allowed moves. Anything absent is forbidden: in particular terminal states never move, a
 * cancelled run never resumes, and `cancelling` only settles into `cancelled` (a model answer
 * that arrives after a cancel request is discarded rather than completing the run).
 */
export const RUN_TRANSITIONS: Readonly<Record<RunStatus, readonly RunStatus[]>> = {
  queued: ['in_progress', 'cancelling'],
  in_progress: ['requires_action', 'completed', 'failed', 'incomplete', 'cancelling'],
  requires_action: ['queued', 'expired', 'cancelling'],
  cancelling: ['cancelled'],
  cancelled: [],
  failed: [],
  completed: [],
  incomplete: [],
  expired: [],
};

export function isRunStatus(value: unknown): value is RunStatus {
  return typeof value === 'string' && (RUN_STATUSES as readonly string[]).includes(value);
}

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return RUN_TRANSITIONS[from].includes(to);
}

/** Thrown for a move the table forbids: a programming error or a lost race, never user input. */
export class InvalidRunTransitionError extends Error {
  override readonly name = 'InvalidRunTransitionError';
  constructor(
    readonly from: RunStatus,
    readonly to: RunStatus,
  ) {
    super(`Run cannot move from "${from}" to "${to}".`);
  }
}

export function assertTransition(from: RunStatus, to: RunStatus): void {
  if (!canTransition(from, to)) throw new InvalidRunTransitionError(from, to);
}

/** Cancel is accepted from queued, in_progress and requires_action; a second cancel is not. */
export function canCancel(status: RunStatus): boolean {
  return canTransition(status, 'cancelling');
}

export function expiresAtFor(createdAt: number): number {
  return createdAt + EXPIRY_SECONDS;
}

/**
 * Only a run waiting for tool outputs expires: queued and in-progress runs are the executor's
 * responsibility, and terminal runs have `expires_at: null`. The deadline itself counts as
 * passed (`now >= expires_at`), so a submit in the very second of expiry is refused.
 */
export function isExpired(run: { status: RunStatus; expires_at: number | null }, now: number): boolean {
  return run.status === 'requires_action' && run.expires_at !== null && now >= run.expires_at;
}

/** The time fields the lifecycle owns (all Unix seconds). */
export interface RunLifecycle {
  status: RunStatus;
  expires_at: number | null;
  started_at: number | null;
  cancelled_at: number | null;
  failed_at: number | null;
  completed_at: number | null;
}

/**
 * Applies one checked move and returns the new lifecycle fields. Stamps the matching `*_at`
 * field, keeps the first `started_at` across tool-output rounds, and clears `expires_at` on a
 * terminal state as the contract requires. `usage`, `required_action`, `last_error` and
 * `incomplete_details` belong to the caller (it knows their values).
 */
export function transition(run: RunLifecycle, to: RunStatus, now: number): RunLifecycle {
  assertTransition(run.status, to);
  const next: RunLifecycle = { ...run, status: to };
  if (to === 'in_progress' && next.started_at === null) next.started_at = now;
  if (to === 'completed') next.completed_at = now;
  if (to === 'failed') next.failed_at = now;
  if (to === 'cancelled') next.cancelled_at = now;
  if (isTerminal(to)) next.expires_at = null;
  return next;
}
