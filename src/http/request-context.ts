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

/**
 * Lets go of the request's context once the edge has finished the response with it (the last
 * step of src/http/edge.ts finishResponse). A context holds a forked EntityManager, a graph of some hundred
 * objects: held by this WeakMap until the request itself is collected, every one of them survived
 * the young generation's collections and went to the old one, which cost more than building it
 * (measured: a request and its fork 15-20 µs of CPU each, 55-60 µs when the fork waited here for the
 * request to go). An answer still streaming keeps its context where it runs (the subscription).
 */
export function releaseContext(request: Request): void {
  contexts.delete(request);
}
