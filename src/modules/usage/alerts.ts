// Decisions about a bucket after its usage changes: its status, and which alerts to raise now.
// Each alert is raised once per bucket and period; the bucket's `is_*_alerts_sent` flags are the
// memory of that, not a previous/new crossing test. Flags survive what a crossing test misses:
// a threshold lowered below current usage mid-period, or a crash between incrementing and
// alerting (the next increment still sees the flag unset and raises the alert).
import type { ValidationIssue } from './conditions.js';

export type BucketStatus = 'active' | 'exhausted';

export interface BucketLimits {
  creditLimit: number;
  /** Null: no threshold alert. */
  alertThreshold: number | null;
}

export interface BucketAlertState extends BucketLimits {
  /** Usage after the change just applied. */
  usage: number;
  isThresholdAlertsSent: boolean;
  isExhaustedAlertsSent: boolean;
}

export interface AlertDecision {
  status: BucketStatus;
  raiseThresholdAlert: boolean;
  raiseExhaustedAlert: boolean;
}

/** Exhausted once usage reaches the limit: a limit of 0 refuses everything. */
export function bucketStatus(usage: number, creditLimit: number): BucketStatus {
  return usage >= creditLimit ? 'exhausted' : 'active';
}

/** Whether a new request may start against this bucket (else 412 before any model work). */
export function admits(usage: number, creditLimit: number): boolean {
  return bucketStatus(usage, creditLimit) === 'active';
}

/**
 * Which alerts to raise for this bucket now. Both can fire at once when one run jumps past the
 * threshold and the limit. The caller should claim each flag atomically
 * (`UPDATE … SET flag = 1 WHERE flag = 0`) and send only if it won, so concurrent increments
 * do not send twice.
 */
export function decideAlerts(state: BucketAlertState): AlertDecision {
  const status = bucketStatus(state.usage, state.creditLimit);
  const thresholdReached = state.alertThreshold !== null && state.usage >= state.alertThreshold;
  return {
    status,
    raiseThresholdAlert: thresholdReached && !state.isThresholdAlertsSent,
    raiseExhaustedAlert: status === 'exhausted' && !state.isExhaustedAlertsSent,
  };
}

/**
 * Limit checks that depend on both values, so an update of either one (PUT sends one) can be
 * checked against the stored other. Params are the wire names.
 */
export function validateLimits(limits: BucketLimits): ValidationIssue[] {
  const { creditLimit, alertThreshold } = limits;
  if (!Number.isFinite(creditLimit) || creditLimit < 0) {
    return [{ param: 'credit_limit', message: 'credit_limit must be a number greater than or equal to 0.' }];
  }
  if (alertThreshold === null) return [];
  if (!Number.isFinite(alertThreshold) || alertThreshold < 0) {
    return [{ param: 'alert_threshold', message: 'alert_threshold must be a number greater than or equal to 0.' }];
  }
  if (alertThreshold >= creditLimit) {
    return [{ param: 'alert_threshold', message: 'alert_threshold must be less than credit_limit.' }];
  }
  return [];
}
