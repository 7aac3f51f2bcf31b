import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ExecutionResult, GraphQLSchema } from 'graphql';
import { Response as ServerResponse } from '@whatwg-node/fetch';
import { createRequestContext, maskError, type RequestContext, type Runtime } from '../schema/index.js';
import { subscribeShared } from '../schema/shared-subscription.js';
import { readRequestLimited } from '../src/http/body-limit.js';
import { markDataPlane } from '../src/http/data-plane.js';
import { requestIdOf } from '../src/http/request-id.js';
import { recordRoute } from '../src/http/route-label.js';
import { feedOf, isAsyncIterable, mapFeed, type Feed } from '../src/lib/feed.js';
import { findInputProblem, type InputProblem } from '../src/http/input-guard.js';
import { InternalError, MethodNotAllowedError, PayloadTooLargeError, UnsupportedMediaTypeError, invalidJson, unknownUrl } from '../schema/contracts.js';
import { executeOperation } from './compiled-operations.js';
import { jsonBody } from './json-body.js';
import { loadOperations, type Operation } from './documents.js';
import { appErrorResponse, badRequest, errorResponse, graphQLErrorResponse, zodErrorResponse } from './errors.js';
import type { RestInput, RouteRow, RouteTable, SseEvent } from './route.js';
import { matchRoute } from './router.js';
import { routes as defaultRoutes } from './routes.js';
import { sseResponse } from './sse.js';

export interface RestOptions {
  runtime: Runtime;
  schema: GraphQLSchema;
  routes?: RouteRow[];
}

/** Answers one `/v1` request (its parsed URL beside it): see `restHandler`. */
export type RestHandler = (request: Request, url: URL) => Promise<Response>;

/**
 * The REST compatibility layer: it answers every `/v1` request by running the row's pre-validated
 * operation through the same context (authentication), execution and error masking as `/graphql`.
 * The edge's work around each answer (request id, CORS, metrics, access line) is the front door's
 * (src/http/front-door.ts), which calls this before Yoga would see the request.
 */
export function restHandler(options: RestOptions): RestHandler {
  const rows = options.routes ?? defaultRoutes;
  const operations = loadOperations(options.schema);
  for (const row of rows) {
    if (!row.operation === !row.document) throw new Error(`Route ${row.method} ${row.path} needs an operation or a document (one of them).`);
    for (const name of [row.operation, row.stream?.operation].filter(Boolean) as string[]) {
      if (!operations.has(name)) throw new Error(`Route ${row.method} ${row.path} names unknown operation ${name}.`);
    }
  }
  return (request, url) => handle(options, rows, operations, request, url);
}

async function handle(options: RestOptions, rows: RouteRow[], operations: ReadonlyMap<string, Operation>, request: Request, url: URL): Promise<Response> {
  const { runtime, schema } = options;
  const { id: requestId } = requestIdOf(request);
  const match = matchRoute(rows, request.method, url.pathname);
  if (match.kind === 'not_found') {
    return appErrorResponse(unknownUrl(request.method, url.pathname));
  }
  if (match.kind === 'method_not_allowed') {
    return appErrorResponse(new MethodNotAllowedError(request.method, url.pathname, match.allow));
  }
  const { row, params } = match;
  recordRoute(request, row.path);
  if (row.document) return documentResponse(row, { rows, schema, operations });
  if (row.dataPlane) markDataPlane(request);

  let context: RequestContext;
  try {
    context = await createRequestContext(runtime, request);
  } catch (error) {
    return graphQLErrorResponse(maskError(error, requestId, runtime.logger));
  }

  const maxDepth = runtime.config.JSON_MAX_DEPTH;
  const rawQuery = Object.fromEntries(url.searchParams);
  const unsafe = findInputProblem(params, maxDepth) ?? findInputProblem(rawQuery, maxDepth);
  if (unsafe) return problemResponse(unsafe);

  const refusal = row.precheck?.({ params, headers: request.headers });
  if (refusal) {
    return errorResponse(refusal.status, { message: refusal.message, type: refusal.type ?? 'invalid_request_error', param: refusal.param ?? null, code: refusal.code });
  }

  const read = await readJsonBody(request, runtime.config.BODY_LIMIT_BYTES);
  if (read instanceof Response) return read;
  const { value: rawBody, large } = read;
  // Parsing, checking and storing a body of a megabyte each take milliseconds: a large body lets
  // other requests in between those steps, so none of them waits for all of them at once.
  if (large) await nextTurn();
  const unsafeBody = findInputProblem(rawBody, maxDepth);
  if (unsafeBody) return problemResponse(unsafeBody);

  let body: unknown = rawBody ?? {};
  if (row.body) {
    const parsed = row.body.safeParse(body);
    if (!parsed.success) return zodErrorResponse(parsed.error, body, 'body');
    body = parsed.data;
  }
  let query: unknown = rawQuery;
  if (row.query) {
    const parsed = row.query.safeParse(rawQuery);
    if (!parsed.success) return zodErrorResponse(parsed.error, rawQuery, 'query');
    query = parsed.data;
  }
  const input: RestInput = { params, body, query, headers: request.headers, context };
  if (large) await nextTurn();

  const operation = operations.get(row.operation!)!;
  const result = await executeOperation(schema, operation, context, row.variables ? row.variables(input) : {});
  if (result.errors?.length) {
    return graphQLErrorResponse(maskError(result.errors[0], requestId, context.log));
  }
  const headers = { ...context.response.headers };

  if (row.stream?.when(input)) {
    const streamOp = operations.get(row.stream.operation)!;
    const subscription = await subscribeShared({
      schema,
      document: streamOp.document,
      operationName: streamOp.name,
      contextValue: context,
      variableValues: row.stream.variables(input, result.data),
    });
    if (!isAsyncIterable(subscription)) {
      const error = (subscription as ExecutionResult).errors?.[0];
      return error ? graphQLErrorResponse(maskError(error, requestId, context.log)) : appErrorResponse(new InternalError(requestId));
    }
    return sseResponse(eventsOf(subscription, row.stream.event), {
      keepAliveMs: runtime.config.SSE_KEEPALIVE_MS,
      signal: runtime.shutdown,
      client: request.signal,
      bareDone: row.stream.bareDone,
      describeError: (error) => {
        const masked = maskError(error, requestId, context.log);
        return { error: { message: masked.message, type: (masked.extensions.type as string) ?? 'server_error', param: null, code: (masked.extensions.code as string) ?? null } };
      },
    }, headers, context.response.status ?? 200);
  }

  const payload = row.result ? row.result(result.data, input) : firstField(result.data);
  // The server adapter's own Response: it writes a string or Buffer body to the socket as it is,
  // where the global (undici) Response would be read back through a web stream.
  return new ServerResponse(jsonBody(payload ?? {}), {
    status: context.response.status ?? row.status ?? 200,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

// Built on first request, once per table: a document depends only on the rows and the schema.
const documents = new WeakMap<RouteRow[], Map<RouteRow, string>>();

/** A row's public document (no API key: it is answered before authentication). */
function documentResponse(row: RouteRow, table: RouteTable): Response {
  let built = documents.get(table.rows);
  if (!built) documents.set(table.rows, (built = new Map()));
  let text = built.get(row);
  if (text === undefined) built.set(row, (text = JSON.stringify(row.document!(table))));
  return new ServerResponse(text, { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' } });
}

function problemResponse(problem: InputProblem): Response {
  return badRequest(problem.message, problem.param, problem.code);
}

/**
 * The value of the result's first field. Read with `for…in`, not `Object.values(data)[0]`: a
 * stream maps every event's result through here, and on graphql's prototype-less results
 * (dictionary objects in V8) `Object.values` builds the whole array, at twice the cost.
 */
function firstField(data: Record<string, unknown> | null | undefined): unknown {
  if (!data) return null;
  for (const key in data) return data[key];
  return undefined;
}

/**
 * A subscription's results as SSE events (`toEvent` of the root field's value), each mapped in the
 * call that delivers it; an error result fails the stream.
 */
function eventsOf(results: AsyncIterable<ExecutionResult>, toEvent: (payload: any) => SseEvent): Feed<SseEvent> {
  return mapFeed(feedOf(results), (result) => {
    if (result.errors?.length) throw result.errors[0];
    return toEvent(firstField(result.data));
  });
}

/** Bodies above this many bytes are handled in steps that each let other requests in. */
const LARGE_BODY_BYTES = 64 * 1024;

const NO_BODY = { value: undefined, large: false };

/**
 * The JSON body (`value`; `undefined` for no body at all) and whether it is large, or the error
 * response for a body that is too large (413), not JSON (415) or malformed (400). A body on DELETE
 * is tolerated (SDKs send one).
 */
async function readJsonBody(request: Request, limit: number): Promise<{ value: unknown; large: boolean } | Response> {
  if (request.method === 'GET' || request.method === 'HEAD') return NO_BODY;
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limit) return tooLarge(limit);
  const bytes = await readRequestLimited(request, limit);
  if (bytes === null) return tooLarge(limit);
  const large = bytes.byteLength > LARGE_BODY_BYTES;
  // A view on the bytes read, not a copy of them.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (!text.trim()) return NO_BODY;
  const contentType = request.headers.get('content-type') ?? '';
  if (!/^application\/(.+\+)?json\b/i.test(contentType)) {
    return appErrorResponse(new UnsupportedMediaTypeError());
  }
  if (large) await nextTurn();
  try {
    return { value: JSON.parse(text), large };
  } catch {
    return appErrorResponse(invalidJson());
  }
}

function tooLarge(limit: number): Response {
  return appErrorResponse(new PayloadTooLargeError(limit));
}
