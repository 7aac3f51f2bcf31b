import { graphqlExtensions, type AppError } from '../errors.js';

/**
 * A GraphQL error response written at the edge (before or beside Yoga's execution), with the
 * extensions every GraphQL error carries: `status`, `type`, `param`, `code`. Errors that already
 * carry a status keep their extensions (transport-only ones dropped); the others get the
 * response's status, the type that goes with it, no param, and their own code or `code`.
 */
export interface GraphQLErrorJson {
  message: string;
  locations?: unknown;
  path?: unknown;
  extensions?: Record<string, unknown>;
}

export function graphqlErrorsResponse(status: number, errors: GraphQLErrorJson[], code: string | null = null, headers = new Headers()): Response {
  const type = status >= 500 ? 'server_error' : 'invalid_request_error';
  const shaped = errors.map((error) => {
    // `http` is Yoga's instruction for the response status, not part of the error.
    const { http: _http, ...extensions } = error.extensions ?? {};
    if (typeof extensions.status === 'number') return { ...error, extensions };
    return { ...error, extensions: graphqlExtensions({ status, type, param: null, code: (extensions.code as string | undefined) ?? code }, extensions) };
  });
  headers.set('content-type', 'application/json; charset=utf-8');
  headers.delete('content-length');
  return new Response(JSON.stringify({ errors: shaped }), { status, headers });
}

/** An AppError raised at the edge, as GraphQL clients read errors. */
export function graphqlAppErrorResponse(error: AppError): Response {
  return graphqlErrorsResponse(error.status, [{ message: error.message, extensions: graphqlExtensions(error) }], null, new Headers(error.headers));
}
