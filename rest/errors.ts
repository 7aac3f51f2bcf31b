import type { GraphQLError } from 'graphql';
import type { ZodError, ZodIssue } from 'zod';
import { extensionsOf, type ErrorExtensions } from '../schema/index.js';

/** The four-key envelope of CONTRACT §3, plus any extra top-level keys (guardrail_results). */
export function errorResponse(
  status: number,
  error: { message: string; type: string; param?: string | null; code?: string | null },
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Response {
  const body = { error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code ?? null }, ...extra };
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

export function graphQLErrorResponse(error: GraphQLError): Response {
  const ext: ErrorExtensions = extensionsOf(error);
  return errorResponse(ext.status, { message: error.message, type: ext.type, param: ext.param, code: ext.code }, ext.headers, ext.extra);
}

export function badRequest(message: string, param: string | null, code: string | null): Response {
  return errorResponse(400, { message, type: 'invalid_request_error', param, code });
}

/** `['tool_outputs', 0, 'output']` → `tool_outputs[0].output` */
export function wirePath(path: ReadonlyArray<string | number>): string {
  return path.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
}

function valueAt(root: unknown, path: ReadonlyArray<string | number>): unknown {
  let current: any = root;
  for (const part of path) current = current == null ? undefined : current[part];
  return current;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value === 'object') return 'an object';
  return typeof value;
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
 * A zod failure in wire terms: the first issue decides the message, `param` is the path of the
 * offending input, `code` says what kind of problem it is (as OpenAI does).
 */
export function zodErrorResponse(error: ZodError, input: unknown, location: 'body' | 'query'): Response {
  const issue: ZodIssue = error.issues[0];
  const path = issue.path;
  const param = wirePath(path);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    return badRequest(`Unrecognized request argument supplied: ${key}`, wirePath([...path, key]), 'unknown_parameter');
  }
  if (issue.code === 'invalid_type') {
    const actual = valueAt(input, path);
    if (actual === undefined) {
      const what = location === 'query' ? 'query parameter' : 'parameter';
      return badRequest(`Missing required ${what}: '${param}'.`, param, 'missing_required_parameter');
    }
    const expected = EXPECTED[issue.expected] ?? issue.expected;
    return badRequest(`Invalid type for '${param}': expected ${expected}, but got ${describe(actual)} instead.`, param, 'invalid_type');
  }
  if (location === 'query') {
    return badRequest(`Invalid value for query parameter '${param}': ${issue.message}`, param, 'invalid_value');
  }
  return badRequest(`Invalid value for '${param}': ${issue.message}`, param || null, 'invalid_value');
}
