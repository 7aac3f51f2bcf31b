import { GraphQLError } from 'graphql';
import { authenticate } from '../src/auth/authenticate.js';
import type { RequestContext } from '../src/context.js';
import { AppError, toExtensions } from '../src/errors.js';
import { Scope } from '../src/auth/tenancy.js';
import type { Runtime } from '../src/runtime.js';
import { contextOf, rememberContext } from '../src/http/request-context.js';
import { requestIdOf } from '../src/http/request-id.js';
import { callerFacts } from '../src/http/caller-facts.js';

export type { RequestContext, Runtime };

/**
 * Builds the per-request context for both front doors: authenticates (401 before any resolver
 * runs), forks an EntityManager and a request logger.
 */
export async function createRequestContext(runtime: Runtime, request: Request): Promise<RequestContext> {
  const existing = contextOf(request);
  if (existing) return existing;
  const { id: requestId, startedAt } = requestIdOf(request);
  let principal;
  try {
    principal = await authenticate(runtime, request.headers);
  } catch (error) {
    if (error instanceof AppError) {
      throw new GraphQLError(error.message, {
        extensions: { ...toExtensions(error), http: { status: error.status } },
      });
    }
    throw error;
  }
  let log: RequestContext['log'] | undefined;
  let caller: RequestContext['caller'] | undefined;
  const context: RequestContext = {
    runtime,
    principal,
    scope: new Scope(principal),
    em: runtime.fork(),
    requestId,
    request,
    // Read when first asked for: only model traffic reads the caller's headers.
    get caller() {
      return (caller ??= callerFacts(request.headers));
    },
    startedAt,
    // Made when first used: most requests log nothing of their own (the access line is the edge's).
    get log() {
      return (log ??= runtime.logger.child({ requestId }));
    },
    response: { headers: {} },
    afterResponse: [],
  };
  rememberContext(request, context);
  return context;
}
