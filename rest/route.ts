import type { GraphQLSchema } from 'graphql';
import type { ZodType } from 'zod';
import type { RequestContext } from '../schema/index.js';
import type { Operation } from './documents.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What a row's mappers see of the request, in wire terms (validated body and query), and its context. */
export interface RestInput<Body = any, Query = any> {
  params: Record<string, string>;
  body: Body;
  query: Query;
  headers: Headers;
  /** The request's context, the one its operation's resolvers get (a parsed body is left there for them). */
  context: RequestContext;
}

export interface RestRefusal {
  status: number;
  message: string;
  type?: string;
  param?: string | null;
  code: string;
}

/** One SSE event produced from one subscription payload. */
export interface SseEvent {
  /** The `event:` name; omitted for bare `data:` events (chat completion chunks). */
  event?: string;
  id?: string | number;
  data: string;
}

/**
 * One row of the route table: a documented method and path, the named GraphQL operation behind it,
 * how request parts become variables, and which part of the result is the response body.
 */
export interface RouteRow {
  method: HttpMethod;
  /** `/v1/...` with `:name` parameters. */
  path: string;
  /** The named GraphQL operation behind the row; every row has one, or else a `document`. */
  operation?: string;
  /**
   * Instead of an operation: a JSON document the REST layer builds once from the table it serves
   * and answers without an API key (the OpenAPI document).
   */
  document?: (table: RouteTable) => unknown;
  /** The row's summary in the OpenAPI document; default: the description of the operation's GraphQL field. */
  summary?: string;
  /** Request headers the row reads (its precheck or the operation), for the OpenAPI document. */
  headers?: Record<string, { required?: boolean; description: string }>;
  /**
   * A check of the request before its body is validated (after authentication), e.g. a required
   * header; returning a value answers with that error instead of running the operation.
   */
  precheck?: (input: Pick<RestInput, 'params' | 'headers'>) => RestRefusal | null;
  body?: ZodType;
  query?: ZodType;
  /** The route makes a model work: every response carries `x-gateway-overhead-ms`. */
  dataPlane?: boolean;
  variables?: (input: RestInput) => Record<string, unknown>;
  /** The response body from the operation's data; default: the first root field's value. */
  result?: (data: any, input: RestInput) => unknown;
  status?: number;
  /**
   * Answer with server-sent events: when `when` holds, after the operation succeeds (its errors
   * are plain JSON errors), subscribe to `operation` and write each payload as one event, then
   * `event: done` / `data: [DONE]`.
   */
  stream?: {
    when: (input: RestInput) => boolean;
    operation: string;
    variables: (input: RestInput, data: any) => Record<string, unknown>;
    event: (payload: any) => SseEvent;
    /** End with a bare `data: [DONE]` (OpenAI chat streams) rather than `event: done` + `data: [DONE]`. */
    bareDone?: boolean;
  };
}

/** The rows the REST layer serves and the GraphQL behind them (what a row's `document` is built from). */
export interface RouteTable {
  rows: RouteRow[];
  schema: GraphQLSchema;
  operations: ReadonlyMap<string, Operation>;
}

/**
 * The control plane's list answer, `{object: "list", total, data}`, built here only: from a page
 * (`total` counts every match) or from a whole list.
 */
export function listBody<T>(list: { total: number; data: T[] } | T[], map: (item: T) => unknown = (item) => item): { object: 'list'; total: number; data: unknown[] } {
  const page = Array.isArray(list) ? { total: list.length, data: list } : list;
  return { object: 'list', total: page.total, data: page.data.map(map) };
}

/**
 * An OpenAI cursor list (assistants, messages, runs, steps) as its document requires it: `first_id`
 * and `last_id` are required strings there, so an empty page answers `""` where GraphQL says null.
 */
export function cursorListBody<T extends { first_id: string | null; last_id: string | null }>(list: T): T & { first_id: string; last_id: string } {
  return { ...list, first_id: list.first_id ?? '', last_id: list.last_id ?? '' };
}
