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
 * What model traffic reads of a request's headers, read once by the edge (`src/http/caller-facts.ts`)
 * so that services take plain values and never an HTTP request.
 */
export interface CallerFacts {
  /** `x-gateway-virtual-key`, else `x-portkey-virtual-key`. */
  virtualKey: string | null;
  /** The metadata header (`x-gateway-metadata`, else `x-portkey-metadata`): its name and raw JSON text. */
  metadataHeader: { name: string; value: string } | null;
  /** Every header, names lower-cased: what guardrail checks may read (a JWT check's token). */
  headers: Record<string, string>;
}

/**
 * Per-request context, shared by both front doors (REST and GraphQL). `response` is the edge's:
 * resolvers put there what a service's answer says beyond its body (rate-limit headers, the 246
 * status of a request that passed a failed non-deny guardrail, overhead timing); services never
 * touch `request` or `response`.
 */
export interface RequestContext extends ServiceContext {
  requestId: string;
  request: Request;
  caller: CallerFacts;
  log: Logger;
  /** Milliseconds since the epoch (performance clock origin) when the request arrived. */
  startedAt: number;
  response: { headers: Record<string, string>; status?: number };
  /** Tasks to run after the response is sent (async guardrails, bookkeeping). */
  afterResponse: Array<() => Promise<void>>;
  /**
   * REST bodies the request's row has parsed, by the contract that parsed them: the resolver
   * behind the row takes them as parsed (schema/contract-input.ts `parsedInput`, `parseInput`).
   */
  parsedBodies?: Map<object, Record<string, unknown>>;
}
