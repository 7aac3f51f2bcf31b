import type { Plugin } from 'graphql-yoga';
import type { Metrics } from '../lib/metrics.js';
import { elapsedSeconds } from './request-id.js';
import { routeOf } from './route-label.js';

/** Every answered request in the request metrics, by route template, method and status. */
export function requestMetricsPlugin(metrics: Metrics): Plugin {
  return {
    onResponse({ request, response }) {
      metrics.observeRequest(routeOf(request), request.method, response.status, elapsedSeconds(request));
    },
  };
}
