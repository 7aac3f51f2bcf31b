import { getOperationAST, type ExecutionResult, type GraphQLError } from 'graphql';
import type { Response as HandlerResponse } from 'graphql-sse';
import { createHandler } from 'graphql-sse/lib/use/fetch';
import type { Plugin } from 'graphql-yoga';
import { extensionsOf, maskError } from '../../schema/index.js';
import { UnsupportedMediaTypeError } from '../errors.js';
import type { Runtime } from '../runtime.js';
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
 */
export function graphqlStreamPlugin(runtime: Runtime, endpoint: string): Plugin {
  const serverContexts = new WeakMap<Request, Record<string, unknown>>();
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
      endResponse(await withExtensions(await handler(request), request.method));
    },
  };

  /** Errors as a refused request; the status is the first error's (a failed authentication is a 401). */
  function refusal(errors: ReadonlyArray<unknown>, request: Request): HandlerResponse {
    const masked: GraphQLError[] = errors.map((error) => maskError(error, requestIdOf(request).id, runtime.logger));
    const status = masked.length ? extensionsOf(masked[0]).status : 400;
    return [JSON.stringify({ errors: masked }), { status, statusText: '', headers: { 'content-type': 'application/json; charset=utf-8' } }];
  }
}

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
