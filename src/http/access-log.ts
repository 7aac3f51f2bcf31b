import type { Principal } from '../auth/principal.js';

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
