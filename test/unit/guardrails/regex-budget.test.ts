import { describe, expect, it } from 'vitest';
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
