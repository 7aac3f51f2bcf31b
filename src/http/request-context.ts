import type { RequestContext } from '../context.js';

/**
 * The context built for a request (schema/context.ts builds it, for either front door), kept
 * beside the request so that the edge can finish the response with it: the headers services set,
 * the after-response tasks, the access line's principal. None when authentication failed.
 */
const contexts = new WeakMap<Request, RequestContext>();

export function rememberContext(request: Request, context: RequestContext): void {
  contexts.set(request, context);
}

export function contextOf(request: Request): RequestContext | undefined {
  return contexts.get(request);
}
