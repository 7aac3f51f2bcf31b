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
  const context = {
    runtime,
    principal,
    scope: new Scope(principal),
    em: runtime.fork(),
    requestId,
    request,
    startedAt,
    response: { headers: {} },
    afterResponse: [],
  } as Omit<RequestContext, 'caller' | 'log'> as RequestContext;
  Object.defineProperties(context, lazyFields);
  rememberContext(request, context);
  return context;
}

/** Where the lazy fields keep what they made: own properties, written once, not enumerable. */
const madeCaller = Symbol('caller');
const madeLog = Symbol('log');
type Made = RequestContext & { [madeCaller]?: RequestContext['caller']; [madeLog]?: RequestContext['log'] };

/**
 * The fields made when first read: only model traffic reads the caller's headers, and most
 * requests log nothing of their own (the access line is the edge's). Own enumerable accessors,
 * as an object literal's `get caller() {…}` made them (Yoga copies the context's fields with
 * Object.assign, reading them), but with getters shared by every context that read the request
 * from `this`: V8 makes an object literal's accessor pair in the old generation, so a pair of
 * getters made per request kept their closures alive through every young-generation collection
 * until a full one, and through them the request, the context and its EntityManager fork (and
 * such a literal is a dictionary-mode object, this one has fast properties).
 */
const lazyFields: PropertyDescriptorMap = {
  [madeCaller]: { value: undefined, writable: true },
  [madeLog]: { value: undefined, writable: true },
  caller: {
    enumerable: true,
    configurable: true,
    get(this: Made) {
      return (this[madeCaller] ??= callerFacts(this.request.headers));
    },
  },
  log: {
    enumerable: true,
    configurable: true,
    get(this: Made) {
      return (this[madeLog] ??= this.runtime.logger.child({ requestId: this.requestId }));
    },
  },
};
