import type { Plugin } from 'graphql-yoga';
import type { Runtime } from '../runtime.js';
import { accessLogPlugin } from './access-log.js';
import { afterResponsePlugin } from './after-response.js';
import { graphqlBodyLimitPlugin } from './body-limit.js';
import { overheadPlugin } from './data-plane.js';
import { graphqlMediaTypePlugin } from './media-type.js';
import { opsPlugin } from './ops.js';
import { requestIdPlugin } from './request-id.js';
import { releaseContextPlugin } from './request-context.js';
import { requestMetricsPlugin } from './request-metrics.js';
import { servedPathsPlugin } from './served-paths.js';
import { serviceHeadersPlugin } from './service-headers.js';

/**
 * What every request meets before GraphQL or REST sees it, and every response on its way out, one
 * job per plugin. The order matters: the request id first (it starts the request's clock), the
 * operations endpoints before the 404 for paths nobody serves, the body limit before the media
 * type (each sets Yoga's parser), and on the way out the headers before the metrics and the
 * access line that report the finished response, and the request's context let go last.
 */
export function edgePlugins(runtime: Runtime): Plugin[] {
  return [
    requestIdPlugin(),
    opsPlugin(runtime),
    servedPathsPlugin(),
    graphqlBodyLimitPlugin(runtime.config.BODY_LIMIT_BYTES),
    graphqlMediaTypePlugin(),
    serviceHeadersPlugin(),
    afterResponsePlugin(),
    overheadPlugin(runtime.metrics),
    requestMetricsPlugin(runtime.metrics),
    accessLogPlugin(runtime.logger),
    releaseContextPlugin(),
  ];
}
