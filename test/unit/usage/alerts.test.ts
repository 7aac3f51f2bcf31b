import { describe, expect, it } from 'vitest';
import { admits, bucketStatus, decideAlerts, validateLimits } from '../../../src/modules/usage/alerts.js';
import type { BucketAlertState } from '../../../src/modules/usage/alerts.js';

const state = (over: Partial<BucketAlertState>): BucketAlertState => ({
  usage: 0,
  creditLimit: 100,
  alertThreshold: 80,
  isThresholdAlertsSent: false,
  isExhaustedAlertsSent: false,
  ...over,
});

describe('bucketStatus / admits', () => {
  it('is exhausted exactly when usage reaches the limit', () => {
    expect(bucketStatus(99.999, 100)).toBe('active');
    expect(bucketStatus(100, 100)).toBe('exhausted');
    expect(bucketStatus(150, 100)).toBe('exhausted');
    expect(admits(99.999, 100)).toBe(true);
    expect(admits(100, 100)).toBe(false);
  });

  it('treats a zero limit as refusing everything', () => {
    expect(bucketStatus(0, 0)).toBe('exhausted');
    expect(admits(0, 0)).toBe(false);
  });
});

describe('decideAlerts', () => {
  it('raises nothing below the threshold', () => {
    expect(decideAlerts(state({ usage: 79.99 }))).toEqual({ status: 'active', raiseThresholdAlert: false, raiseExhaustedAlert: false });
  });

  it('raises the threshold alert on reaching it exactly', () => {
    expect(decideAlerts(state({ usage: 80 }))).toEqual({ status: 'active', raiseThresholdAlert: true, raiseExhaustedAlert: false });
  });

  it('raises each alert once per period (the sent flags win)', () => {
    expect(decideAlerts(state({ usage: 90, isThresholdAlertsSent: true })).raiseThresholdAlert).toBe(false);
    expect(decideAlerts(state({ usage: 120, isThresholdAlertsSent: true, isExhaustedAlertsSent: true }))).toEqual({
      status: 'exhausted',
      raiseThresholdAlert: false,
      raiseExhaustedAlert: false,
    });
  });

  it('raises the limit alert on reaching the limit, after the threshold one', () => {
    expect(decideAlerts(state({ usage: 100, isThresholdAlertsSent: true }))).toEqual({
      status: 'exhausted',
      raiseThresholdAlert: false,
      raiseExhaustedAlert: true,
    });
  });

  it('raises both when one run jumps past threshold and limit', () => {
    expect(decideAlerts(state({ usage: 250 }))).toEqual({ status: 'exhausted', raiseThresholdAlert: true, raiseExhaustedAlert: true });
  });

  it('has no threshold alert when alert_threshold is null', () => {
    expect(decideAlerts(state({ usage: 99, alertThreshold: null }))).toEqual({ status: 'active', raiseThresholdAlert: false, raiseExhaustedAlert: false });
    expect(decideAlerts(state({ usage: 100, alertThreshold: null })).raiseExhaustedAlert).toBe(true);
  });

  it('still alerts when the threshold is lowered below usage mid-period', () => {
    expect(decideAlerts(state({ usage: 70, alertThreshold: 50 })).raiseThresholdAlert).toBe(true);
  });
});

describe('validateLimits', () => {
  it('accepts a threshold below the limit, or none', () => {
    expect(validateLimits({ creditLimit: 100, alertThreshold: 80 })).toEqual([]);
    expect(validateLimits({ creditLimit: 0, alertThreshold: null })).toEqual([]);
    expect(validateLimits({ creditLimit: 1, alertThreshold: 0 })).toEqual([]);
  });

  it('refuses a threshold at or above the limit', () => {
    const expected = [{ param: 'alert_threshold', message: 'alert_threshold must be less than credit_limit.' }];
    expect(validateLimits({ creditLimit: 100, alertThreshold: 100 })).toEqual(expected);
    expect(validateLimits({ creditLimit: 100, alertThreshold: 101 })).toEqual(expected);
  });

  it('refuses negative or non-finite values', () => {
    expect(validateLimits({ creditLimit: -1, alertThreshold: null })).toEqual([
      { param: 'credit_limit', message: 'credit_limit must be a number greater than or equal to 0.' },
    ]);
    expect(validateLimits({ creditLimit: Number.NaN, alertThreshold: null })[0]!.param).toBe('credit_limit');
    expect(validateLimits({ creditLimit: 10, alertThreshold: -1 })[0]!.param).toBe('alert_threshold');
  });
});
