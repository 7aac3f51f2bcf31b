import type { Plugin } from 'graphql-yoga';
import { contextOf } from './request-context.js';

/**
 * Headers a service asked for on the request's context (x-ratelimit-*, Retry-After for GraphQL
 * clients): services say them, the edge writes them. A header the response already has wins.
 */
export function serviceHeadersPlugin(): Plugin {
  return {
    onResponse({ request, response }) {
      const context = contextOf(request);
      if (!context) return;
      for (const [name, value] of Object.entries(context.response.headers)) {
        if (!response.headers.has(name)) response.headers.set(name, value);
      }
    },
  };
}
