import vm from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runsWithinBound } from '../../../src/modules/guardrails/checks/regex-cost.js';
import { runWithBudget } from '../../../src/modules/guardrails/checks/time-budget.js';
import { runCheck } from './helpers.js';

const evil = 'a'.repeat(40) + '!';

describe('time budget for user patterns', () => {
  it('returns the value of ordinary work', () => {
    expect(runWithBudget(() => /b+/.exec('abbc')?.[0], 100)).toEqual({ ok: true, value: 'bb' });
  });

  it('rethrows errors that are not timeouts', () => {
    expect(() =>
      runWithBudget(() => {
        throw new Error('boom');
      }, 100),
    ).toThrow('boom');
  });

  it('interrupts catastrophic backtracking in /(a+)+$/', () => {
    const started = performance.now();
    expect(runWithBudget(() => /(a+)+$/.exec(evil), 50)).toEqual({ ok: false, timedOut: true });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('default.regexMatch fails (never hangs) on a pathological rule, even with not', async () => {
    for (const not of [false, true]) {
      const started = performance.now();
      const r = await runCheck('default.regexMatch', { rule: '(a+)+$', not }, { text: evil }, { regexBudgetMs: 50 });
      expect(performance.now() - started).toBeLessThan(1000);
      expect(r).toEqual({
        verdict: false,
        explanation: 'The regex did not finish within 50 ms (catastrophic backtracking?); treated as a failure.',
        data: { rule: '(a+)+$', timedOut: true, not },
        error: 'budget_exceeded',
      });
    }
    // The same rule on benign text is fine.
    expect((await runCheck('default.regexMatch', { rule: '(a+)+$' }, { text: 'aaa' }, { regexBudgetMs: 50 })).verdict).toBe(true);
  });

  it('default.jsonSchema runs `pattern` keywords under the same budget', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
    const started = performance.now();
    const r = await runCheck('default.jsonSchema', { schema }, { text: JSON.stringify({ s: evil }) }, { regexBudgetMs: 50 });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(r.verdict).toBe(false);
    expect(r.error).toBe('budget_exceeded');
  });
});

describe('patterns proven cheap skip the budget', () => {
  // The budget is node:vm's watchdog; a pattern run directly never enters a vm script.
  const vmRuns = () => vi.spyOn(vm.Script.prototype, 'runInContext');
  afterEach(() => vi.restoreAllMocks());

  it('a literal or bounded rule runs directly, on short and long texts', async () => {
    const spy = vmRuns();
    expect((await runCheck('default.regexMatch', { rule: 'tickets' }, { text: 'the open tickets' })).verdict).toBe(true);
    expect((await runCheck('default.regexMatch', { rule: '\\b\\d{3}-\\d{2}-\\d{4}\\b' }, { text: `${'x '.repeat(2000)}123-45-6789` })).verdict).toBe(true);
    expect((await runCheck('default.regexMatch', { rule: '(password|secret)', not: true }, { text: 'nothing to hide' })).verdict).toBe(true);
    expect(spy).not.toHaveBeenCalled();
  });

  it('rules whose work is not bounded keep the budget: nested, overlapping, polynomial, backreferences', async () => {
    for (const rule of ['(a+)+$', '(a|a)*$', 'a*a*a*a*b', '(a)\\1', '(?<x>a)\\k<x>']) {
      const spy = vmRuns();
      await runCheck('default.regexMatch', { rule }, { text: evil }, { regexBudgetMs: 50 });
      expect(spy, rule).toHaveBeenCalledTimes(1);
      spy.mockRestore();
    }
  });

  it('the bound grows with the text: an unbounded repetition runs directly on a short text only', () => {
    expect(runsWithinBound('\\d+', 64)).toBe(true);
    expect(runsWithinBound('\\d+', 10_000)).toBe(false);
    expect(runsWithinBound('tickets', 100_000)).toBe(true);
    expect(runsWithinBound('[', 1)).toBe(false);
  });

  it('a rule judged for one length answers every other length as if judged first', () => {
    // [0-9]+ on n characters: (n + 1) starts × (n + 1) iteration counts × (n + 1) deep ≤ 10⁶ up to n = 99.
    const asked = [10_000, 99, 100, 50, 1_000, 0, 99, 101, 98];
    expect(asked.map((n) => runsWithinBound('[0-9]+', n))).toEqual(asked.map((n) => n <= 99));
    expect(runsWithinBound('[0-9]+(', 0)).toBe(false);
    expect(runsWithinBound('[0-9]+(', 0)).toBe(false);
  });
});
