import type { GraphQLError } from 'graphql';
import type { ZodError } from 'zod';
import { contractError } from '../schema/contracts.js';
import { extensionsOf, type ErrorExtensions } from '../schema/index.js';
import { errorResponse } from '../src/http/error-response.js';

// The envelope is written in src/http/error-response.ts, shared with the edge; rest/ reaches it here.
export { appErrorResponse, errorResponse } from '../src/http/error-response.js';

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
