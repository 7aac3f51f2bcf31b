import type { GraphQLError } from 'graphql';
import type { ZodError } from 'zod';
import { contractError, type AppError } from '../schema/contracts.js';
import { extensionsOf, type ErrorExtensions } from '../schema/index.js';

/** The four-key envelope (docs/contract.md#errors), plus any extra top-level keys (guardrail_results). */
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

/** A registered error the edge answers itself (405, 413, 415, malformed JSON, unknown URL). */
export function appErrorResponse(error: AppError): Response {
  return errorResponse(error.status, error, error.headers, error.extra);
}

export function graphQLErrorResponse(error: GraphQLError): Response {
  const ext: ErrorExtensions = extensionsOf(error);
  return errorResponse(ext.status, { message: error.message, type: ext.type, param: ext.param, code: ext.code }, ext.headers, ext.extra);
}

export function badRequest(message: string, param: string | null, code: string | null): Response {
  return errorResponse(400, { message, type: 'invalid_request_error', param, code });
}

/** A body or query string its row's schema refused, worded by the one contract formatter. */
export function zodErrorResponse(error: ZodError, input: unknown, location: 'body' | 'query'): Response {
  const refusal = contractError(error, input, location);
  return badRequest(refusal.message, refusal.param, refusal.code);
}
