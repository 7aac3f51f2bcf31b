import type { Principal } from '../auth/principal.js';
import type { Logger } from '../lib/logger.js';
import { elapsedSeconds, requestIdOf } from './request-id.js';
import { routeOf } from './route-label.js';

export interface AccessLogInput {
  requestId: string;
  method: string;
  /** The route template, never the raw URL: paths and queries may carry ids and tokens. */
  route: string;
  status: number;
  seconds: number;
  principal?: Principal;
}

/**
 * The fields of a request's access line. Only identifiers are logged (the API key's id, the
 * workspace's id), never the key itself, a header or the query string.
 */
export function accessLogFields(input: AccessLogInput): Record<string, string | number> {
  const fields: Record<string, string | number> = {
    requestId: input.requestId,
    method: input.method,
    route: input.route,
    status: input.status,
    ms: Math.round(input.seconds * 1000),
  };
  if (input.principal) {
    fields.apiKeyId = input.principal.apiKeyId;
    if (input.principal.workspaceId) fields.workspaceId = input.principal.workspaceId;
  }
  return fields;
}

/**
 * One access line per request; failures at warn so they still show at LOG_LEVEL=warn. The line is
 * built only when its level is on (this runs for every request).
 */
export function logAccess(logger: Logger, request: Request, response: Response, principal: Principal | undefined): void {
  const level = response.status >= 500 ? 'warn' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const fields = accessLogFields({
    requestId: requestIdOf(request).id,
    method: request.method,
    route: routeOf(request),
    status: response.status,
    seconds: elapsedSeconds(request),
    principal,
  });
  logger[level](fields, level === 'warn' ? 'request failed' : 'request');
}
