import { Buffer } from 'node:buffer';
import { getOperationAST, type ExecutionResult, type GraphQLError } from 'graphql';
import type { Response as HandlerResponse } from 'graphql-sse';
import { createHandler } from 'graphql-sse/lib/use/fetch';
import type { Plugin } from 'graphql-yoga';
import { extensionsOf, maskError, type RequestContext } from '../../schema/index.js';
import { sharedFeedOf } from '../../schema/shared-subscription.js';
import type { Feed } from '../lib/feed.js';
import { UnsupportedMediaTypeError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { eventStreamResponse, sharedFrames } from './event-stream.js';
import { requestIdOf } from './request-id.js';
import { graphqlErrorsResponse, type GraphQLErrorJson } from './graphql-errors.js';


/**
 * GraphQL over SSE (graphql-sse's protocol) at `endpoint`, through the same envelop pipeline as
 * /graphql. It replaces @graphql-yoga/plugin-graphql-sse, which (a) lets a syntax error escape
 * the handler, and (b) turns a validation error or a request error (a refused variable, a failed
 * authentication) into "Unable to detect operation AST", since graphql-sse takes a result without
 * `data` for execution arguments. Here those are answered with their own status and errors, and
 * graphql-sse's protocol refusals (unknown stream token, missing operation id, wrong method or
 * Accept), which have bare `{"errors":[{"message"}]}` or no body, get the extensions every other
 * GraphQL error carries (`status`, `type`, `param`, `code`).
 *
 * A subscription in distinct-connection mode (one stream per operation, Accept:
 * text/event-stream) whose results are shared (schema/shared-subscription.ts: a run's events)
 * is written here rather than by graphql-sse, which serialises each result once per
 * subscriber: each shared result is serialised once for all its streams, and the stream is fed
 * by push with a bound for slow clients (src/http/event-stream.ts). The wire format is
 * graphql-sse's (an empty comment first, `event: next` per result, `event: complete`).
 */
export function graphqlStreamPlugin(runtime: Runtime, endpoint: string): Plugin {
  const serverContexts = new WeakMap<Request, Record<string, unknown>>();
  /** Streams answered here instead of by graphql-sse, by request. */
  const ownStreams = new WeakMap<Request, Response>();
  let handler: (request: Request) => Promise<Response>;
  return {
    onYogaInit({ yoga }) {
      handler = createHandler(
        {
          async onSubscribe(req, params): Promise<HandlerResponse | ExecutionResult | AsyncIterable<ExecutionResult>> {
            const request = req.raw;
            const enveloped = yoga.getEnveloped({ ...serverContexts.get(request), request, params });
            try {
              const document = enveloped.parse(params.query);
              const invalid = enveloped.validate(enveloped.schema, document);
              if (invalid.length) return refusal(invalid, request);
              const contextValue = await enveloped.contextFactory();
              const operation = getOperationAST(document, params.operationName)?.operation;
              const run = operation === 'subscription' ? enveloped.subscribe : enveloped.execute;
              const result = (await run({ schema: enveloped.schema, document, contextValue, variableValues: params.variables, operationName: params.operationName })) as
                | ExecutionResult
                | AsyncIterable<ExecutionResult>;
              // Errors without data were found before execution started: the request is refused.
              if (!(Symbol.asyncIterator in result) && !('data' in result)) return refusal(result.errors ?? [], request);
              // Envelop's plugins wrapped the shared feed; taken here, that wrapper is never started.
              const shared = operation === 'subscription' && req.headers.get('accept') === 'text/event-stream' ? sharedFeedOf(contextValue) : undefined;
              if (shared) {
                ownStreams.set(request, distinctStream(shared, request, contextValue as unknown as RequestContext));
                return [null, { status: 200, statusText: 'OK' }];
              }
              return result;
            } catch (error) {
              return refusal([error], request);
            }
          },
        },
        yoga.fetchAPI,
      );
    },
    async onRequest({ request, url, serverContext, endResponse }) {
      if (url.pathname !== endpoint) return;
      serverContexts.set(request, serverContext as Record<string, unknown>);
      const response = await handler(request);
      endResponse(ownStreams.get(request) ?? (await withExtensions(response, request.method)));
    },
  };

  /** A distinct-connection stream of shared results, in graphql-sse's wire format. */
  function distinctStream(results: Feed<ExecutionResult>, request: Request, context: RequestContext): Response {
    const masked = (result: ExecutionResult) => ({ ...result, errors: result.errors!.map((error) => maskError(error, context.requestId, context.log)) });
    return eventStreamResponse(
      results,
      {
        keepAliveMs: runtime.config.SSE_KEEPALIVE_MS,
        signal: runtime.shutdown,
        client: request.signal,
        // A result with errors belongs to this subscriber alone (shared results have none).
        frame: (result) => (result.errors?.length ? Buffer.from(nextFrame(masked(result))) : sharedFrame(result)),
        end: COMPLETE,
        failure: (error) => nextFrame({ errors: [maskError(error, context.requestId, context.log)] }) + COMPLETE,
        ping: PING,
        open: ':\n\n',
      },
      {
        status: 200,
        headers: { connection: 'keep-alive', 'cache-control': 'no-cache', 'content-encoding': 'none', 'content-type': 'text/event-stream; charset=utf-8' },
      },
    );
  }

  /** Errors as a refused request; the status is the first error's (a failed authentication is a 401). */
  function refusal(errors: ReadonlyArray<unknown>, request: Request): HandlerResponse {
    const masked: GraphQLError[] = errors.map((error) => maskError(error, requestIdOf(request).id, runtime.logger));
    const status = masked.length ? extensionsOf(masked[0]).status : 400;
    return [JSON.stringify({ errors: masked }), { status, statusText: '', headers: { 'content-type': 'application/json; charset=utf-8' } }];
  }
}

const PING = Buffer.from(':\n\n');
const COMPLETE = 'event: complete\ndata:\n\n';
const nextFrame = (result: ExecutionResult) => `event: next\ndata: ${JSON.stringify(result)}\n\n`;

/** A shared result's `next` frame: serialised once however many streams carry it. */
const sharedFrame = sharedFrames(nextFrame);

const CODES: Record<number, string> = {
  400: 'invalid_request',
  404: 'stream_not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  409: 'stream_conflict',
  415: 'unsupported_media_type',
};

/** What an empty-bodied refusal means, as graphql-sse's handler decides them. */
function emptyMessage(status: number, method: string): string {
  switch (status) {
    case 404:
      return 'Stream not found: register one with PUT (then send its token), or ask for a single stream with Accept: text/event-stream.';
    case 405:
      return `Method ${method} is not allowed here. Allowed: GET, POST, PUT, DELETE.`;
    case 406:
      return 'Not acceptable: a stream token is registered with Accept: text/plain, operations are sent with Accept: application/json.';
    case 415:
      return new UnsupportedMediaTypeError().message;
    default:
      return `The stream request failed with status ${status}.`;
  }
}

/** A refusal with every error in the common shape; success passes through untouched. */
async function withExtensions(response: Response, method: string): Promise<Response> {
  if (response.status < 400) return response;
  let errors: GraphQLErrorJson[];
  try {
    errors = (JSON.parse(await response.text()) as { errors: GraphQLErrorJson[] }).errors;
    if (!Array.isArray(errors)) throw new TypeError('no errors list');
  } catch {
    errors = [{ message: emptyMessage(response.status, method) }];
  }
  return graphqlErrorsResponse(response.status, errors, CODES[response.status] ?? null, new Headers(response.headers));
}
