import { GraphQLError } from 'graphql';
import { AppError, InternalError, graphqlExtensions, toExtensions, type ErrorExtensions, type ErrorFields } from '../src/errors.js';
import type { Logger } from '../src/lib/logger.js';

export type { ErrorExtensions };

/** The AppError behind a GraphQL error, if any (resolver errors arrive wrapped). */
function appErrorOf(error: unknown): AppError | null {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    if (current instanceof AppError) return current;
    current = (current as { originalError?: unknown }).originalError;
  }
  return null;
}

/**
 * Error masking shared by both front doors: an AppError travels with its status, type, param and
 * code in `extensions`; GraphQL validation errors are the caller's fault (400); anything else is
 * logged once with its stack and replaced by a 500 that names only the request id.
 */
export function maskError(error: unknown, requestId: string, logger: Logger): GraphQLError {
  const appError = appErrorOf(error);
  const graphqlError = error instanceof GraphQLError ? error : null;
  if (appError) {
    return new GraphQLError(appError.message, {
      nodes: graphqlError?.nodes,
      path: graphqlError?.path,
      extensions: toExtensions(appError) as unknown as Record<string, unknown>,
    });
  }
  if (graphqlError && !graphqlError.originalError && typeof graphqlError.extensions?.status === 'number') {
    // Already carries an AppError's extensions (e.g. authentication, raised while building the context).
    return graphqlError;
  }
  if (graphqlError && (!graphqlError.originalError || !graphqlError.path)) {
    // Parse, validation and variable-coercion errors (the last carry the scalar's TypeError as
    // originalError, but no path): the request is wrong, not the server.
    return new GraphQLError(graphqlError.message, {
      nodes: graphqlError.nodes,
      path: graphqlError.path,
      extensions: graphqlExtensions(requestErrorFields(graphqlError, 400), { ...graphqlError.extensions, http: { status: 400 } }),
    });
  }
  logger.error({ err: graphqlError?.originalError ?? error, requestId }, 'unexpected error');
  return new GraphQLError(new InternalError(requestId).message, {
    nodes: graphqlError?.nodes,
    path: graphqlError?.path,
    extensions: toExtensions(new InternalError(requestId)) as unknown as Record<string, unknown>,
  });
}

/**
 * A request error graphql-js or a document limit found (syntax, validation, variable coercion):
 * the caller's fault, with no param, and the error's own code when it has one.
 */
export function requestErrorFields(error: GraphQLError, status: number): ErrorFields {
  return { status, type: 'invalid_request_error', param: null, code: (error.extensions?.code as string | undefined) ?? 'graphql_validation_failed' };
}

export function extensionsOf(error: GraphQLError): ErrorExtensions {
  const ext = error.extensions as Partial<ErrorExtensions>;
  return {
    status: typeof ext.status === 'number' ? ext.status : 500,
    type: ext.type ?? 'server_error',
    param: ext.param ?? null,
    code: ext.code ?? null,
    headers: ext.headers ?? {},
    extra: ext.extra ?? {},
  };
}
