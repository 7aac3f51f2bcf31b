import { z } from 'zod';
import { checkRegistry } from './checks/registry.js';

/** A check entry as stored: parameters parsed by the check's schema, defaults applied. */
export interface NormalizedCheck {
  id: string;
  name?: string;
  is_enabled: boolean;
  parameters: Record<string, unknown>;
}

export interface Feedback {
  value: number;
  weight: number;
  metadata: string;
}

export interface GuardrailActions {
  deny: boolean;
  async: boolean;
  on_success: { feedback: Feedback };
  on_fail: { feedback: Feedback };
}

/** `param` is the wire path of the offending input, ready for the error envelope (docs/contract.md#errors). */
export type ValidationFailure = { ok: false; param: string; message: string };

/** `a.b[0].c` from a base and a zod issue path. */
export function paramPath(base: string, path: ReadonlyArray<string | number>): string {
  return path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : `${acc}.${part}`), base);
}

function describeIssue(issue: z.ZodIssue): string {
  if (issue.code === z.ZodIssueCode.invalid_type) {
    if (issue.received === 'undefined') return 'is required';
    const article = /^[aeiou]/.test(issue.expected) ? 'an' : 'a';
    return `must be ${article} ${issue.expected} (got ${issue.received})`;
  }
  // zod's "Number must be greater than or equal to 1" reads well after the param once the noun goes.
  return issue.message.replace(/^(Number|String|Array) must/, 'must');
}

/** The first zod issue as a failure: one clear problem at a time, like the rest of the API. */
export function issueToFailure(base: string, error: z.ZodError): ValidationFailure {
  const issue = error.issues[0]!;
  const param = paramPath(base, issue.path);
  return { ok: false, param, message: `Invalid ${param}: ${describeIssue(issue)}.` };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Write-time validation of a guardrail's `checks`: known ids, well-typed entry fields, and each
 * check's parameters (regexes must compile, JSON schemas must be valid). Returns the checks with
 * defaults applied, so stored records are complete.
 */
export function validateChecks(checks: unknown): { ok: true; checks: NormalizedCheck[] } | ValidationFailure {
  if (!Array.isArray(checks)) return { ok: false, param: 'checks', message: 'Invalid checks: must be an array.' };
  if (checks.length === 0) return { ok: false, param: 'checks', message: 'Invalid checks: must contain at least one check.' };
  const out: NormalizedCheck[] = [];
  for (const [i, entry] of checks.entries()) {
    const at = `checks[${i}]`;
    if (!isObject(entry)) return { ok: false, param: at, message: `Invalid ${at}: must be an object.` };
    if (typeof entry.id !== 'string') {
      return { ok: false, param: `${at}.id`, message: `Invalid ${at}.id: ${entry.id === undefined ? 'is required' : 'must be a string'}.` };
    }
    const check = checkRegistry.get(entry.id);
    if (!check) {
      return { ok: false, param: `${at}.id`, message: `Invalid ${at}.id: unknown check "${entry.id}". Known checks: ${[...checkRegistry.keys()].join(', ')}.` };
    }
    if (entry.name !== undefined && typeof entry.name !== 'string') return { ok: false, param: `${at}.name`, message: `Invalid ${at}.name: must be a string.` };
    if (entry.is_enabled !== undefined && typeof entry.is_enabled !== 'boolean') {
      return { ok: false, param: `${at}.is_enabled`, message: `Invalid ${at}.is_enabled: must be a boolean.` };
    }
    const rawParams = entry.parameters ?? {};
    if (!isObject(rawParams)) return { ok: false, param: `${at}.parameters`, message: `Invalid ${at}.parameters: must be an object.` };
    const parsed = check.parameters.safeParse(rawParams);
    if (!parsed.success) return issueToFailure(`${at}.parameters`, parsed.error);
    out.push({
      id: entry.id,
      ...(entry.name !== undefined ? { name: entry.name } : {}),
      is_enabled: entry.is_enabled ?? true,
      parameters: parsed.data as Record<string, unknown>,
    });
  }
  return { ok: true, checks: out };
}

const feedback = (value: number) =>
  z
    .object({
      value: z.number().finite().default(value),
      weight: z.number().finite().default(1),
      metadata: z.string().default(''),
    })
    .default({});

const actionsSchema = z.object({
  deny: z.boolean().default(false),
  async: z.boolean().default(false),
  on_success: z.object({ feedback: feedback(5) }).default({}),
  on_fail: z.object({ feedback: feedback(-5) }).default({}),
});

/** The documented defaults (feedback 5 / -5, weight 1) for every omitted field, including single fields inside a feedback object. */
export function normalizeActions(actions?: unknown): { ok: true; actions: GuardrailActions } | ValidationFailure {
  const parsed = actionsSchema.safeParse(actions ?? {});
  if (!parsed.success) return issueToFailure('actions', parsed.error);
  return { ok: true, actions: parsed.data };
}
