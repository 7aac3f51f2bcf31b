import { z } from 'zod';
import type { CheckResult } from './check.js';

/** `not` flips a check's verdict (Portkey's convention); absent means false. */
export const notParam = z.boolean().default(false);

export const setOperator = z.enum(['any', 'all', 'none']);
export type SetOperator = z.infer<typeof setOperator>;

/** any: at least one found; all: every one found; none: not one found. */
export function operatorHolds(operator: SetOperator, found: number, total: number): boolean {
  if (operator === 'any') return found > 0;
  if (operator === 'all') return found === total;
  return found === 0;
}

/**
 * `matched` is the plain condition (e.g. "the count is in range"); the verdict is that condition,
 * inverted when `not` is set. The explanation states the fact and says when it was inverted.
 */
export function conditionResult(
  matched: boolean,
  not: boolean,
  fact: string,
  data: Record<string, unknown> = {},
): CheckResult {
  const verdict = not ? !matched : matched;
  const explanation = not ? `${fact} Inverted by not: the check ${verdict ? 'passes' : 'fails'}.` : fact;
  return { verdict, explanation, data: { ...data, not } };
}

export function excerpt(text: string, max = 100): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

/** Range parameters: min above max is a write-time error reported on the max field. */
export function minNotAboveMax(minKey: string, maxKey: string) {
  return (v: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const min = v[minKey] as number;
    const max = v[maxKey] as number;
    if (min > max) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: [maxKey], message: `must be greater than or equal to ${minKey} (${min})` });
    }
  };
}

/** Non-negative integer count with a default (Portkey's catalogue defaults). */
export const count = (dflt: number) => z.number().int().min(0).default(dflt);

const MAX_JSON_CANDIDATES = 50;

/**
 * JSON values found in model text: the whole text, then fenced code blocks, then top-level
 * balanced `{…}` spans. Every scan is linear in the text length (Portkey's lazy `{[\s\S]*?}`
 * regex is quadratic on text with many unmatched braces).
 */
export function extractJson(text: string): unknown[] {
  const found: unknown[] = [];
  const tryParse = (s: string) => {
    if (found.length >= MAX_JSON_CANDIDATES) return;
    try {
      found.push(JSON.parse(s));
    } catch {
      // Not JSON: prose that happens to contain braces.
    }
  };

  const trimmed = text.trim();
  if (trimmed) tryParse(trimmed);

  for (let open = text.indexOf('```'); open !== -1; ) {
    const close = text.indexOf('```', open + 3);
    if (close === -1) break;
    tryParse(text.slice(open + 3, close).replace(/^json\b/i, '').trim());
    open = text.indexOf('```', close + 3);
  }

  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"' && depth > 0) {
      inString = true;
    } else if (ch === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === '}' && depth > 0) {
      depth--;
      if (depth === 0) tryParse(text.slice(start, i + 1));
    }
  }
  return found;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
