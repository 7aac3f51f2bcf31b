/**
 * Operation contracts: each operation's input is one zod schema in wire (snake_case) terms, used by
 * the REST row to validate and by the GraphQL resolver to parse, so both front doors refuse the
 * same input with the same error. `contractError` is the one formatter from a schema failure to
 * OpenAI's wording and the `param` path; the helpers below build the checks whose wording is
 * OpenAI's own (`Invalid 'top_p': decimal above maximum value. …`).
 */
import { z, type ZodError, type ZodIssue, type ZodTypeAny } from 'zod';
import { BadRequestError, invalidType, type ErrorCode, missingParameter, quoteList, unsupportedValue } from '../errors.js';

/** GraphQL's Int is 32-bit: a larger integer could be stored but never read back. */
export const INT32_MAX = 2_147_483_647;
export const INT32_MIN = -2_147_483_648;

/** `['tool_outputs', 0, 'output']` → `tool_outputs[0].output` */
export function wirePath(path: ReadonlyArray<string | number>): string {
  return path.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

/**
 * What a contract check attaches to its zod issue: the OpenAI `code`, and either the whole message
 * or (the usual form) the text after `Invalid '<param>': `.
 */
interface WireIssue {
  wireCode: ErrorCode;
  wireMessage?: string;
}

function addWireIssue(ctx: z.RefinementCtx, wireCode: ErrorCode, message: string, options: { whole?: boolean; path?: (string | number)[] } = {}): void {
  const params: WireIssue = options.whole ? { wireCode, wireMessage: message } : { wireCode };
  ctx.addIssue({ code: z.ZodIssueCode.custom, message, params, path: options.path });
}

function valueAt(root: unknown, path: ReadonlyArray<string | number>): unknown {
  let current: any = root;
  for (const part of path) current = current == null ? undefined : current[part];
  return current;
}

const samePath = (a: ReadonlyArray<string | number>, b: ReadonlyArray<string | number>) => a.length === b.length && a.every((p, i) => p === b[i]);

/**
 * The issue that explains a union's failure: the branch whose type matched (its first problem),
 * or, when no branch's type matched, a type issue naming every expected type.
 */
function unionIssue(issue: Extract<ZodIssue, { code: 'invalid_union' }>): ZodIssue {
  const firsts = issue.unionErrors.map((e) => e.issues[0]).filter((i): i is ZodIssue => i !== undefined);
  const typeMisses = firsts.filter((i) => i.code === 'invalid_type' && samePath(i.path, issue.path));
  if (typeMisses.length === firsts.length && firsts.length > 0) {
    const expected = typeMisses.map((i) => (i as Extract<ZodIssue, { code: 'invalid_type' }>).expected);
    return { ...typeMisses[0], expected: expected.join(' or ') } as ZodIssue;
  }
  const decisive = firsts.find((i) => !typeMisses.includes(i)) ?? issue;
  return decisive.code === 'invalid_union' ? unionIssue(decisive) : decisive;
}

/**
 * A schema failure as the 400 both front doors answer: the first issue decides, `param` is the
 * wire path of the offending input.
 */
export function contractError(error: ZodError, input: unknown, location: 'body' | 'query' = 'body'): BadRequestError {
  let issue: ZodIssue = error.issues[0];
  if (issue.code === 'invalid_union') issue = unionIssue(issue);
  const param = wirePath(issue.path);
  const actual = valueAt(input, issue.path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const key = issue.keys[0];
      return new BadRequestError(`Unrecognized request argument supplied: ${key}`, { param: wirePath([...issue.path, key]), code: 'unknown_parameter' });
    }
    case 'invalid_type': {
      if (actual === undefined) return missingParameter(param, location);
      const expected = issue.expected
        .split(' or ')
        .map((e) => EXPECTED[e] ?? e)
        .join(' or ');
      return invalidType(param, expected, actual);
    }
    case 'invalid_union_discriminator':
      if (actual === undefined) return missingParameter(param, location);
      return unsupportedValue(param, actual, issue.options);
    case 'custom': {
      const wire = issue.params as WireIssue | undefined;
      if (wire?.wireCode) {
        return new BadRequestError(wire.wireMessage ?? `Invalid '${param}': ${issue.message}`, { param, code: wire.wireCode });
      }
      break;
    }
  }
  if (location === 'query') {
    return new BadRequestError(`Invalid value for query parameter '${param}': ${issue.message}`, { param, code: 'invalid_value' });
  }
  return new BadRequestError(`Invalid value for '${param}': ${issue.message}`, { param: param || null, code: 'invalid_value' });
}

/** The parsed input, or the contract's 400. */
export function parseContract<S extends ZodTypeAny>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw contractError(parsed.error, input);
  return parsed.data;
}

// ---------------------------------------------------------------------------------------------
// Checks in OpenAI's wording

/** A string: not blank (unless `allowEmpty`), at most `max` characters, matching `pattern`. */
export function text(options: { max?: number; allowEmpty?: boolean; pattern?: RegExp } = {}) {
  return z.string().superRefine((value, ctx) => {
    if (!options.allowEmpty && value.trim() === '') {
      addWireIssue(ctx, 'empty_string', 'empty string. Expected a string with minimum length 1, but got an empty string instead.');
    } else if (options.max !== undefined && value.length > options.max) {
      addWireIssue(
        ctx,
        'string_above_max_length',
        `string too long. Expected a string with maximum length ${options.max}, but got a string with length ${value.length} instead.`,
      );
    } else if (options.pattern && !options.pattern.test(value)) {
      addWireIssue(ctx, 'invalid_value', `string does not match pattern. Expected a string that matches the pattern '${options.pattern.source}'.`);
    }
  });
}

function bounds(kind: 'integer' | 'decimal', min: number, max: number) {
  return (value: number, ctx: z.RefinementCtx) => {
    if (value < min) addWireIssue(ctx, `${kind}_below_min_value` as const, `${kind} below minimum value. Expected a value >= ${min}, but got ${value} instead.`);
    else if (value > max) addWireIssue(ctx, `${kind}_above_max_value` as const, `${kind} above maximum value. Expected a value <= ${max}, but got ${value} instead.`);
  };
}

/** An integer in [min, max]; the range never leaves GraphQL's 32-bit Int. */
export function integer(options: { min?: number; max?: number } = {}) {
  return z.number().int().superRefine(bounds('integer', Math.max(options.min ?? INT32_MIN, INT32_MIN), Math.min(options.max ?? INT32_MAX, INT32_MAX)));
}

/** A query-string integer: digits (a sign allowed, so -1 reaches the range check), then `integer`. */
export function queryInteger(options: { min?: number; max?: number } = {}) {
  return z
    .string()
    .superRefine((value, ctx) => {
      if (!/^-?\d{1,16}$/.test(value)) addWireIssue(ctx, 'invalid_type', `Invalid type for '${wirePath(ctx.path)}': expected an integer, but got '${value}' instead.`, { whole: true });
    })
    .transform(Number)
    .pipe(integer(options));
}

/** A number in [min, max] (both inclusive). */
export function decimal(min: number, max: number) {
  return z.number().superRefine(bounds('decimal', min, max));
}

/** One of a fixed set of strings. */
export function oneOf<const T extends string>(values: readonly T[]) {
  return z
    .string()
    .superRefine((value, ctx) => {
      if (!(values as readonly string[]).includes(value)) {
        addWireIssue(ctx, 'invalid_value', `Invalid value: '${value}'. Supported values are: ${quoteList(values)}.`, { whole: true });
      }
    })
    .transform((value) => value as T);
}

/** An array of `item` with a length in [min, max], checked before any item is. */
export function list<T extends ZodTypeAny>(item: T, options: { min?: number; max?: number }) {
  return z
    .array(z.unknown())
    .superRefine((value, ctx) => {
      if (options.min !== undefined && value.length < options.min) {
        addWireIssue(ctx, 'empty_array', `empty array. Expected an array with minimum length ${options.min}, but got an empty array instead.`);
      } else if (options.max !== undefined && value.length > options.max) {
        addWireIssue(
          ctx,
          'array_above_max_length',
          `array too long. Expected an array with maximum length ${options.max}, but got an array with length ${value.length} instead.`,
        );
      }
    })
    .pipe(z.array(item));
}

/** Metadata: at most `pairs` string pairs, keys ≤ `keyMax` and values ≤ `valueMax` characters. */
export function stringPairs(options: { pairs: number; keyMax: number; valueMax: number }) {
  return z
    .record(z.unknown())
    .superRefine((value, ctx) => {
      const keys = Object.keys(value);
      if (keys.length > options.pairs) {
        addWireIssue(
          ctx,
          'object_above_max_properties',
          `too many properties. Expected an object with at most ${options.pairs} properties, but got an object with ${keys.length} properties instead.`,
        );
        return;
      }
      const long = keys.find((key) => key.length > options.keyMax);
      if (long !== undefined) {
        addWireIssue(ctx, 'string_above_max_length', `key too long. Expected a key with maximum length ${options.keyMax}, but got a key with length ${long.length} instead.`);
      }
    })
    .pipe(z.record(text({ max: options.valueMax, allowEmpty: true })));
}

/** A refinement that reports `message` at `path` (relative) with an OpenAI `code`. */
export function refuse(ctx: z.RefinementCtx, code: ErrorCode, message: string, path?: (string | number)[]): void {
  addWireIssue(ctx, code, message, { path });
}

/** A refinement that reports the whole `message` (no `Invalid '<param>': ` prefix) at `path` with an OpenAI `code`. */
export function refuseWhole(ctx: z.RefinementCtx, code: ErrorCode, message: string, path?: (string | number)[]): void {
  addWireIssue(ctx, code, message, { whole: true, path });
}

/** Drops keys whose value is null, so an omitted option and a null one store the same. */
export function withoutNulls<T extends Record<string, unknown>>(value: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null)) as any;
}
