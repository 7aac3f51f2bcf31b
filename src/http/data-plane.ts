/**
 * Data-plane requests are the ones that make a model work (create run, create thread and run,
 * submit tool outputs, over REST or GraphQL). Every response to one carries the time it spent in
 * the gateway: the REST layer marks its data-plane rows as soon as the route matched (so a 400 or
 * 401 on them carries it too), the resolvers of model work mark theirs (`schema/data-plane.ts`:
 * GraphQL mutations included), and the edge stamps the header when the response is ready.
 */
import type { Metrics } from '../lib/metrics.js';
import { requestIdOf } from './request-id.js';

export const OVERHEAD_HEADER = 'x-gateway-overhead-ms';

const dataPlaneRequests = new WeakSet<Request>();

export function markDataPlane(request: Request): void {
  dataPlaneRequests.add(request);
}

/**
 * Sets `x-gateway-overhead-ms` on a data-plane response and observes the overhead histogram: the
 * time from the request's arrival to its answer being ready (for a stream, to the stream's
 * start). Run routes execute the model in the background, so none of the model's time is in it.
 */
export function stampOverhead(metrics: Metrics, request: Request, response: Response): void {
  if (!dataPlaneRequests.has(request) || response.headers.has(OVERHEAD_HEADER)) return;
  const ms = performance.now() - requestIdOf(request).startedAt;
  response.headers.set(OVERHEAD_HEADER, ms.toFixed(3));
  metrics.overhead.observe(ms / 1000);
}
