import type { Plugin } from 'graphql-yoga';
import { unknownUrl } from '../errors.js';
import { isConsolePath } from './console.js';
import { appErrorResponse } from './error-response.js';
import { recordRoute, UNKNOWN_ROUTE } from './route-label.js';

/**
 * The paths the gateway serves besides the operations endpoints (answered before this plugin):
 * GraphQL over HTTP, GraphQL over SSE, the REST layer under /v1 (which labels its own routes) and
 * the console's pages (which label theirs).
 * Any other path is a 404 here, before authentication or a body is read.
 */
export const GRAPHQL_PATH = '/graphql';
export const GRAPHQL_STREAM_PATH = '/graphql/stream';

/** The route label of a GraphQL endpoint's path, or null for any other path. */
export function graphqlRouteOf(pathname: string): string | null {
  if (pathname === GRAPHQL_PATH || pathname === `${GRAPHQL_PATH}/`) return GRAPHQL_PATH;
  return pathname === GRAPHQL_STREAM_PATH ? GRAPHQL_STREAM_PATH : null;
}

export function isRestPath(pathname: string): boolean {
  return pathname === '/v1' || pathname.startsWith('/v1/');
}

export function servedPathsPlugin(): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      const graphqlRoute = graphqlRouteOf(url.pathname);
      if (graphqlRoute) return recordRoute(request, graphqlRoute);
      if (isRestPath(url.pathname) || isConsolePath(url.pathname)) return;
      recordRoute(request, UNKNOWN_ROUTE);
      endResponse(appErrorResponse(unknownUrl(request.method, url.pathname)));
    },
  };
}
