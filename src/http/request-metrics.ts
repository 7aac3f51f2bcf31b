import type { Metrics } from '../lib/metrics.js';
import { elapsedSeconds } from './request-id.js';
import { routeOf } from './route-label.js';

/** Every answered request in the request metrics, by route template, method and status. */
export function observeRequest(metrics: Metrics, request: Request, response: Response): void {
  metrics.observeRequest(routeOf(request), request.method, response.status, elapsedSeconds(request));
}
