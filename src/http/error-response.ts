import type { AppError } from '../errors.js';

/**
 * The REST error body, wherever an HTTP answer is written (the REST layer, the edge, the drain):
 * the four-key envelope of docs/contract.md#errors, plus any extra top-level keys
 * (guardrail_results).
 */
export interface ErrorEnvelopeInput {
  message: string;
  type: string;
  param?: string | null;
  code?: string | null;
}

export function errorBody(error: ErrorEnvelopeInput, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code ?? null }, ...extra });
}

export function errorResponse(status: number, error: ErrorEnvelopeInput, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}): Response {
  return new Response(errorBody(error, extra), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/** A registered error answered as it is (405, 413, 415, malformed JSON, unknown URL, 503). */
export function appErrorResponse(error: AppError): Response {
  return errorResponse(error.status, error, error.headers, error.extra);
}
