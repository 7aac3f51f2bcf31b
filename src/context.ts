import type { EntityManager } from '@mikro-orm/core';
import type { Principal } from './auth/principal.js';
import type { Scope } from './auth/tenancy.js';
import type { Logger } from './lib/logger.js';
import type { Runtime } from './runtime.js';

/** What a service needs: a unit of work, who is calling (and what it may see), and the app. */
export interface ServiceContext {
  em: EntityManager;
  principal: Principal;
  /** Tenancy questions (which rows, which workspace, organisation key or not): ask this. */
  scope: Scope;
  runtime: Runtime;
}

/**
 * Per-request context, shared by both front doors (REST and GraphQL). `response` lets a service
 * shape the HTTP answer beyond its body: rate-limit headers, the 246 status of a request that
 * passed a failed non-deny guardrail, overhead timing.
 */
export interface RequestContext extends ServiceContext {
  requestId: string;
  request: Request;
  log: Logger;
  /** Milliseconds since the epoch (performance clock origin) when the request arrived. */
  startedAt: number;
  response: { headers: Record<string, string>; status?: number };
  /** Tasks to run after the response is sent (async guardrails, bookkeeping). */
  afterResponse: Array<() => Promise<void>>;
}
