import { z } from 'zod';
import { defineCheck, errorMessage } from './check.js';
import { conditionResult, excerpt, notParam } from './text-utils.js';
import { runsWithinBound } from './regex-cost.js';
import { DEFAULT_BUDGET_MS, runWithBudget } from './time-budget.js';

const parameters = z.object({
  rule: z
    .string()
    .min(1, 'must not be empty')
    .max(10_000, 'must be at most 10000 characters')
    .superRefine((rule, ctx) => {
      try {
        new RegExp(rule);
      } catch (e) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `is not a valid regular expression: ${errorMessage(e)}` });
      }
    }),
  not: notParam,
});

export const regexMatch = defineCheck('default.regexMatch', parameters, (p, ctx, opts) => {
  const budgetMs = opts.regexBudgetMs ?? DEFAULT_BUDGET_MS;
  const re = new RegExp(p.rule);
  // The rule is user input: a pattern like (a+)+$ can take exponential time on a crafted text, so
  // it runs under the budget unless its work on this text is proven small (regex-cost.ts).
  const run = runsWithinBound(p.rule, ctx.text.length) ? { ok: true as const, value: re.exec(ctx.text) } : runWithBudget(() => re.exec(ctx.text), budgetMs);
  if (!run.ok) {
    return {
      verdict: false,
      explanation: `The regex did not finish within ${budgetMs} ms (catastrophic backtracking?); treated as a failure.`,
      data: { rule: p.rule, timedOut: true, not: p.not },
      error: 'budget_exceeded',
    };
  }
  const match = run.value;
  return conditionResult(match !== null, p.not, `The regex ${match ? 'matched' : 'did not match'} the text.`, {
    rule: p.rule,
    match: match ? { text: excerpt(match[0]), index: match.index } : null,
  });
});
