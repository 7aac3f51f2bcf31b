import type { Plugin } from 'graphql-yoga';
import type { Runtime } from '../runtime.js';
import { logAccess } from './access-log.js';
import { startAfterResponse } from './after-response.js';
import { graphqlBodyLimitPlugin } from './body-limit.js';
import { stampOverhead } from './data-plane.js';
import { graphqlMediaTypePlugin } from './media-type.js';
import { opsPlugin } from './ops.js';
import { requestIdPlugin, stampRequestId } from './request-id.js';
import { contextOf, releaseContext } from './request-context.js';
import { observeRequest } from './request-metrics.js';
import { servedPathsPlugin } from './served-paths.js';
import { addServiceHeaders } from './service-headers.js';

/**
 * What every request Yoga answers meets before GraphQL sees it, and every response on its way out,
 * one job per plugin (REST requests meet the same in src/http/front-door.ts). The order matters:
 * the request id first (it starts the request's clock), the operations endpoints before the 404 for
 * paths nobody serves, the body limit before the media type (each sets Yoga's parser), and on the
 * way out `finishResponse`.
 */
export function edgePlugins(runtime: Runtime): Plugin[] {
  const finish = finishResponse(runtime);
  return [
    requestIdPlugin(),
    opsPlugin(runtime),
    servedPathsPlugin(),
    graphqlBodyLimitPlugin(runtime.config.BODY_LIMIT_BYTES),
    graphqlMediaTypePlugin(),
    {
      onResponse({ request, response }) {
        finish(request, response);
      },
    },
  ];
}

/**
 * Every response on its way out, whichever front door answered it, in this order: its request id
 * and the headers services asked for (before the metrics and the access line that report the
 * finished response), the after-response tasks, the overhead of a data-plane request, the request
 * metrics, the access line, and the request's context let go last.
 */
export function finishResponse(runtime: Runtime): (request: Request, response: Response) => void {
  const { metrics, logger } = runtime;
  return (request, response) => {
    stampRequestId(request, response);
    const context = contextOf(request);
    if (context) {
      addServiceHeaders(context, response);
      startAfterResponse(context);
    }
    stampOverhead(metrics, request, response);
    observeRequest(metrics, request, response);
    logAccess(logger, request, response, context?.principal);
    releaseContext(request);
  };
}
