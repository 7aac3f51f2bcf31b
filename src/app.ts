import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { RequestContext } from './context.js';
import type { Config } from './config.js';
import { PayloadTooLargeError, UnsupportedMediaTypeError, unknownUrl } from './errors.js';
import { limitedParser } from './http/body-limit.js';
import { graphqlAppErrorResponse } from './http/graphql-errors.js';
import { graphqlStreamPlugin } from './http/graphql-stream.js';
import { stampOverhead } from './http/data-plane.js';
import { opsResponse } from './http/ops.js';
import { accessLogFields } from './http/access-log.js';
import { recordRoute, routeOf, UNKNOWN_ROUTE } from './http/route-label.js';
import { createRuntime, startModules, type Runtime, type RuntimeOptions } from './runtime.js';
import { domainModules } from './modules/index.js';
import { bootstrap, type BootstrapResult } from './modules/tenancy/bootstrap.js';
import { contextOf, createRequestContext, documentErrorsPlugin, inputGuardPlugin, maskingPlugin, requestIdOf, schema } from '../schema/index.js';
import { appErrorResponse } from '../rest/errors.js';
import { restPlugin } from '../rest/plugin.js';

export interface App {
  runtime: Runtime;
  yoga: YogaServerInstance<Record<string, unknown>, RequestContext>;
  bootstrapResult: BootstrapResult;
  /** The app as a fetch handler (tests call it in-process). */
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Builds the whole gateway: database, domains, GraphQL (Yoga), the REST layer and operations
 * endpoints. It listens nowhere: `server.ts` puts it on a port, tests call `fetch`.
 */
export async function createApp(config: Config, options: RuntimeOptions = {}): Promise<App> {
  const runtime = await createRuntime(config, domainModules, options);
  const bootstrapResult = await bootstrap(runtime);
  await startModules(runtime);

  const yoga = createYoga<Record<string, unknown>, RequestContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    logging: false,
    graphiql: { title: 'Gatehouse', subscriptionsProtocol: 'GRAPHQL_SSE' },
    context: ({ request }) => createRequestContext(runtime, request),
    // Masking happens in maskingPlugin, which knows the request id; Yoga's would not.
    maskedErrors: false,
    plugins: [
      edgePlugin(runtime),
      maskingPlugin(),
      documentErrorsPlugin(),
      inputGuardPlugin(config.JSON_MAX_DEPTH),
      EnvelopArmorPlugin({
        maxDepth: { n: config.GRAPHQL_MAX_DEPTH },
        maxAliases: { n: config.GRAPHQL_MAX_ALIASES },
        costLimit: { maxCost: config.GRAPHQL_MAX_COST },
        maxTokens: { n: config.GRAPHQL_MAX_TOKENS },
        maxDirectives: { n: 50 },
        blockFieldSuggestion: { enabled: false },
      }),
      graphqlStreamPlugin(runtime, '/graphql/stream'),
      restPlugin({ runtime, schema }),
    ],
  });

  return {
    runtime,
    yoga,
    bootstrapResult,
    fetch: async (request) => yoga.fetch(request),
    close: () => runtime.close(),
  };
}

/**
 * What every response shares: the request id, metrics, the body-size limit for /graphql, the
 * operations endpoints, 404 for paths nobody serves, and headers services set on the context.
 */
function edgePlugin(runtime: Runtime): Plugin {
  const graphqlTooLarge = () => graphqlAppErrorResponse(new PayloadTooLargeError(runtime.config.BODY_LIMIT_BYTES));
  return {
    async onRequest({ request, url, endResponse }) {
      requestIdOf(request);
      const pathname = url.pathname;
      const ops = await opsResponse(runtime, request, pathname);
      if (ops) {
        recordRoute(request, pathname);
        return endResponse(ops);
      }
      if (pathname === '/graphql' || pathname === '/graphql/' || pathname === '/graphql/stream') {
        recordRoute(request, pathname.startsWith('/graphql/stream') ? '/graphql/stream' : '/graphql');
        const declared = Number(request.headers.get('content-length') ?? NaN);
        if (declared > runtime.config.BODY_LIMIT_BYTES) return endResponse(graphqlTooLarge());
        return;
      }
      if (pathname === '/v1' || pathname.startsWith('/v1/')) return;
      recordRoute(request, UNKNOWN_ROUTE);
      return endResponse(appErrorResponse(unknownUrl(request.method, pathname)));
    },
    // A body without a declared length is held to the limit while it is read.
    onRequestParse({ requestParser, setRequestParser }) {
      // No parser for the content type: Yoga itself would answer an empty 415.
      setRequestParser(requestParser ? limitedParser(requestParser, runtime.config.BODY_LIMIT_BYTES, graphqlTooLarge) : () => graphqlAppErrorResponse(new UnsupportedMediaTypeError()));
    },
    onResponse({ request, response }) {
      const { id, startedAt } = requestIdOf(request);
      response.headers.set('x-gateway-request-id', id);
      const context = contextOf(request);
      if (context) {
        for (const [name, value] of Object.entries(context.response.headers)) {
          if (!response.headers.has(name)) response.headers.set(name, value);
        }
        for (const task of context.afterResponse.splice(0)) {
          task().catch((error: unknown) => context.log.error({ err: error }, 'after-response task failed'));
        }
      }
      stampOverhead(request, response, startedAt, runtime.metrics);
      const route = routeOf(request);
      const seconds = (performance.now() - startedAt) / 1000;
      runtime.metrics.observeRequest(route, request.method, response.status, seconds);
      // One access line per request; failures at warn so they still show at LOG_LEVEL=warn. The
      // line is built only when its level is on (this runs for every request).
      const level = response.status >= 500 ? 'warn' : 'info';
      if (runtime.logger.isLevelEnabled(level)) {
        const fields = accessLogFields({ requestId: id, method: request.method, route, status: response.status, seconds, principal: context?.principal });
        runtime.logger[level](fields, level === 'warn' ? 'request failed' : 'request');
      }
    },
  };
}
