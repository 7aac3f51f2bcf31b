import type { RequestContext } from '../context.js';

/**
 * Headers a service asked for on the request's context (x-ratelimit-*, Retry-After for GraphQL
 * clients): services say them, the edge writes them. A header the response already has wins.
 */
export function addServiceHeaders(context: RequestContext, response: Response): void {
  for (const [name, value] of Object.entries(context.response.headers)) {
    if (!response.headers.has(name)) response.headers.set(name, value);
  }
}
