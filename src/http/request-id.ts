import type { Plugin } from 'graphql-yoga';
import { timeOrderedUuid } from '../lib/ids.js';

/**
 * The request id every response carries in `x-gateway-request-id` (logs and the 500 message name
 * it too): the caller's own when it is sane, else a fresh one. The request's clock starts when its
 * id is first asked for, which the edge does first, so durations cover the whole request.
 */
export const REQUEST_ID_HEADER = 'x-gateway-request-id';

const CALLER_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const requestIds = new WeakMap<Request, { id: string; startedAt: number }>();

export function requestIdOf(request: Request): { id: string; startedAt: number } {
  let entry = requestIds.get(request);
  if (!entry) {
    const callers = request.headers.get(REQUEST_ID_HEADER);
    entry = {
      // Time-ordered: rows indexed by request id (guardrail evaluations) are appended to that index.
      id: callers && CALLER_REQUEST_ID.test(callers) ? callers : timeOrderedUuid(),
      startedAt: performance.now(),
    };
    requestIds.set(request, entry);
  }
  return entry;
}

/** Seconds since the request arrived (since its id was first asked for). */
export function elapsedSeconds(request: Request): number {
  return (performance.now() - requestIdOf(request).startedAt) / 1000;
}

/** Gives each request Yoga answers its id on arrival (the REST edge does it itself: src/http/front-door.ts). */
export function requestIdPlugin(): Plugin {
  return {
    onRequest({ request }) {
      requestIdOf(request);
    },
  };
}

/** Puts the request's id on its response. */
export function stampRequestId(request: Request, response: Response): void {
  response.headers.set(REQUEST_ID_HEADER, requestIdOf(request).id);
}
