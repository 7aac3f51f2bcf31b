import { z } from 'zod';
import { defineCheck, errorMessage } from './check.js';
import { compileSchema } from './json-schema-compiler.js';
import { conditionResult, extractJson, isPlainObject, notParam } from './text-utils.js';
import { DEFAULT_BUDGET_MS, runWithBudget } from './time-budget.js';

const parameters = z.object({
  schema: z.record(z.unknown()).superRefine((schema, ctx) => {
    try {
      compileSchema(schema);
    } catch (e) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `is not a valid JSON schema: ${errorMessage(e)}` });
    }
  }),
  not: notParam,
});

/**
 * Passes when some JSON value in the text validates. Text without any JSON fails whatever `not`
 * says (as in Portkey): the check is about JSON output.
 */
export const jsonSchema = defineCheck('default.jsonSchema', parameters, (p, ctx, opts) => {
  const validate = compileSchema(p.schema);
  const candidates = extractJson(ctx.text);
  if (candidates.length === 0) return { verdict: false, explanation: 'No JSON found in the text.', data: { not: p.not } };

  const budgetMs = opts.regexBudgetMs ?? DEFAULT_BUDGET_MS;
  let firstErrors: unknown[] | undefined;
  for (const value of candidates) {
    // `pattern` keywords are user regexes too, so validation runs under the same budget.
    const run = runWithBudget(() => validate(value), budgetMs);
    if (!run.ok) {
      return {
        verdict: false,
        explanation: `Schema validation did not finish within ${budgetMs} ms; treated as a failure.`,
        data: { timedOut: true, not: p.not },
        error: 'budget_exceeded',
      };
    }
    if (run.value) return conditionResult(true, p.not, 'JSON in the text matches the schema.', { matchedJson: isPlainObject(value) || Array.isArray(value) ? value : undefined });
    firstErrors ??= (validate.errors ?? []).slice(0, 10).map((e) => ({ path: e.instancePath, message: e.message }));
  }
  return conditionResult(false, p.not, 'No JSON in the text matches the schema.', { validationErrors: firstErrors });
});
