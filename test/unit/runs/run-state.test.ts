import { describe, expect, it } from 'vitest';
import {
  EXPIRY_SECONDS,
  InvalidRunTransitionError,
  RUN_STATUSES,
  assertTransition,
  canCancel,
  canTransition,
  expiresAtFor,
  isExpired,
  isRunStatus,
  isTerminal,
  transition,
  type RunLifecycle,
  type RunStatus,
} from '../../../src/modules/runs/run-state.js';

// Written out from docs/contract.md#run-lifecycle independently of the module's table.
const ALLOWED = new Set([
  'queued>in_progress',
  'queued>cancelling',
  'in_progress>requires_action',
  'in_progress>completed',
  'in_progress>failed',
  'in_progress>incomplete',
  'in_progress>cancelling',
  'requires_action>queued',
  'requires_action>expired',
  'requires_action>cancelling',
  'cancelling>cancelled',
]);
const TERMINAL: RunStatus[] = ['completed', 'failed', 'cancelled', 'expired', 'incomplete'];
const pairs = RUN_STATUSES.flatMap((from) => RUN_STATUSES.map((to) => [from, to] as const));

describe('run statuses', () => {
  it('lists the nine contract statuses', () => {
    expect([...RUN_STATUSES].sort()).toEqual(
      ['cancelled', 'cancelling', 'completed', 'expired', 'failed', 'in_progress', 'incomplete', 'queued', 'requires_action'],
    );
    expect(isRunStatus('requires_action')).toBe(true);
    expect(isRunStatus('done')).toBe(false);
    expect(isRunStatus(3)).toBe(false);
  });

  it.each(RUN_STATUSES)('%s: terminal exactly when in the terminal list', (status) => {
    expect(isTerminal(status)).toBe(TERMINAL.includes(status));
  });

  it.each(RUN_STATUSES)('%s: cancel allowed only from queued, in_progress, requires_action', (status) => {
    expect(canCancel(status)).toBe(['queued', 'in_progress', 'requires_action'].includes(status));
  });
});

describe('transitions', () => {
  it('covers all 81 pairs, 11 of them allowed', () => {
    expect(pairs).toHaveLength(81);
    expect(pairs.filter(([f, t]) => canTransition(f, t))).toHaveLength(11);
  });

  it.each(pairs.filter(([f, t]) => ALLOWED.has(`${f}>${t}`)))('allows %s → %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
    expect(() => assertTransition(from, to)).not.toThrow();
  });

  it.each(pairs.filter(([f, t]) => !ALLOWED.has(`${f}>${t}`)))('forbids %s → %s', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
    let caught: unknown;
    try {
      assertTransition(from, to);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidRunTransitionError);
    expect((caught as InvalidRunTransitionError).message).toBe(`Run cannot move from "${from}" to "${to}".`);
    expect((caught as InvalidRunTransitionError).from).toBe(from);
    expect((caught as InvalidRunTransitionError).to).toBe(to);
  });

  it.each(TERMINAL)('%s never moves again', (status) => {
    expect(RUN_STATUSES.filter((to) => canTransition(status, to))).toEqual([]);
  });

  it.each(['queued', 'in_progress', 'requires_action'] as const)('cancel path from %s', (from) => {
    expect(canTransition(from, 'cancelling')).toBe(true);
    expect(canTransition('cancelling', 'cancelled')).toBe(true);
    expect(canTransition(from, 'cancelled')).toBe(false);
  });
});

describe('expiry', () => {
  const created = 1_700_000_000;

  it('is 600 seconds after creation', () => {
    expect(EXPIRY_SECONDS).toBe(600);
    expect(expiresAtFor(created)).toBe(1_700_000_600);
  });

  it('expires a requires_action run at and after expires_at, not before', () => {
    const run = { status: 'requires_action' as const, expires_at: created + 600 };
    expect(isExpired(run, created + 599)).toBe(false);
    expect(isExpired(run, created + 600)).toBe(true);
    expect(isExpired(run, created + 10_000)).toBe(true);
  });

  it.each(RUN_STATUSES.filter((s) => s !== 'requires_action'))('does not expire a %s run', (status) => {
    const run = { status, expires_at: created + 600 };
    expect(isExpired(run, created + 10_000)).toBe(false);
  });

  it('does not expire a run without expires_at', () => {
    expect(isExpired({ status: 'requires_action', expires_at: null }, created + 10_000)).toBe(false);
  });
});

describe('transition()', () => {
  const created = 1_700_000_000;
  const fresh: RunLifecycle = {
    status: 'queued',
    expires_at: created + 600,
    started_at: null,
    cancelled_at: null,
    failed_at: null,
    completed_at: null,
  };

  it('walks a tool round to completion, stamping times and clearing expires_at at the end', () => {
    const started = transition(fresh, 'in_progress', created + 1);
    expect(started).toEqual({ ...fresh, status: 'in_progress', started_at: created + 1 });
    const waiting = transition(started, 'requires_action', created + 2);
    expect(waiting).toEqual({ ...started, status: 'requires_action' });
    const requeued = transition(waiting, 'queued', created + 3);
    const resumed = transition(requeued, 'in_progress', created + 4);
    expect(resumed.started_at).toBe(created + 1);
    const done = transition(resumed, 'completed', created + 5);
    expect(done).toEqual({
      status: 'completed',
      expires_at: null,
      started_at: created + 1,
      cancelled_at: null,
      failed_at: null,
      completed_at: created + 5,
    });
    expect(fresh.status).toBe('queued');
  });

  it('stamps failed_at and cancelled_at; expired and incomplete only clear expires_at', () => {
    const running = transition(fresh, 'in_progress', created + 1);
    expect(transition(running, 'failed', created + 7)).toMatchObject({ status: 'failed', failed_at: created + 7, expires_at: null });
    expect(transition(running, 'incomplete', created + 7)).toEqual({ ...running, status: 'incomplete', expires_at: null });
    const cancelling = transition(running, 'cancelling', created + 8);
    expect(cancelling).toEqual({ ...running, status: 'cancelling' });
    expect(transition(cancelling, 'cancelled', created + 9)).toMatchObject({
      status: 'cancelled',
      cancelled_at: created + 9,
      expires_at: null,
    });
    const waiting = transition(running, 'requires_action', created + 2);
    expect(transition(waiting, 'expired', created + 600)).toEqual({ ...waiting, status: 'expired', expires_at: null });
  });

  it('refuses a forbidden move', () => {
    expect(() => transition(fresh, 'completed', created)).toThrow(InvalidRunTransitionError);
  });
});
