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

/** A check entry once its contract has checked the types (`checks[i]` of a create or update). */
export interface CheckEntry {
  id: string;
  name?: string | null;
  is_enabled?: boolean | null;
  parameters?: Record<string, unknown> | null;
}

/**
 * `at` is the wire path of the offending input relative to the checks list, `param` the same path
 * from the body's root, ready for the error envelope (docs/contract.md#errors).
 */
export type ValidationFailure = { ok: false; param: string; at: (string | number)[]; message: string };

/** `a.b[0].c` from a base and a path. */
function paramPath(base: string, path: ReadonlyArray<string | number>): string {
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

function failure(at: (string | number)[], problem: string): ValidationFailure {
  const param = paramPath('checks', at);
  return { ok: false, param, at, message: `Invalid ${param}: ${problem}.` };
}

/**
 * Write-time judgement of a guardrail's typed `checks`: at least one, known ids, and each check's
 * parameters (regexes must compile, JSON schemas must be valid). Returns the checks with defaults
 * applied, so stored records are complete.
 */
export function validateChecks(checks: readonly CheckEntry[]): { ok: true; checks: NormalizedCheck[] } | ValidationFailure {
  if (checks.length === 0) return failure([], 'must contain at least one check');
  const out: NormalizedCheck[] = [];
  for (const [i, entry] of checks.entries()) {
    const check = checkRegistry.get(entry.id);
    if (!check) return failure([i, 'id'], `unknown check "${entry.id}". Known checks: ${[...checkRegistry.keys()].join(', ')}`);
    const parsed = check.parameters.safeParse(entry.parameters ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return failure([i, 'parameters', ...issue.path], describeIssue(issue));
    }
    out.push({
      id: entry.id,
      ...(entry.name != null ? { name: entry.name } : {}),
      is_enabled: entry.is_enabled ?? true,
      parameters: parsed.data as Record<string, unknown>,
    });
  }
  return { ok: true, checks: out };
}

type Maybe<T> = T | null | undefined;
type FeedbackEntry = Maybe<{ value?: Maybe<number>; weight?: Maybe<number>; metadata?: Maybe<string> }>;
type OutcomeEntry = Maybe<{ feedback?: FeedbackEntry }>;
/** Actions once their contract has checked the types; any field may be omitted. */
export type ActionsEntry = Maybe<{ deny?: Maybe<boolean>; async?: Maybe<boolean>; on_success?: OutcomeEntry; on_fail?: OutcomeEntry }>;

const feedbackOf = (entry: FeedbackEntry, value: number): Feedback => ({
  value: entry?.value ?? value,
  weight: entry?.weight ?? 1,
  metadata: entry?.metadata ?? '',
});

/** The documented defaults (feedback 5 / -5, weight 1) for every omitted field, including single fields inside a feedback object. */
export function normalizeActions(actions?: ActionsEntry): GuardrailActions {
  return {
    deny: actions?.deny ?? false,
    async: actions?.async ?? false,
    on_success: { feedback: feedbackOf(actions?.on_success?.feedback, 5) },
    on_fail: { feedback: feedbackOf(actions?.on_fail?.feedback, -5) },
  };
}
