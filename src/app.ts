import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { RequestListener } from 'node:http';
import { createYoga } from 'graphql-yoga';
import type { RequestContext } from './context.js';
import type { Config } from './config.js';
import { consolePlugin } from './http/console.js';
import { edgePlugins } from './http/edge.js';
import { frontDoor } from './http/front-door.js';
import { offlineGraphiQL } from './http/graphiql.js';
import { graphqlStreamPlugin } from './http/graphql-stream.js';
import { GRAPHQL_PATH, GRAPHQL_STREAM_PATH } from './http/served-paths.js';
import { createRuntime, startModules, type Runtime, type RuntimeOptions } from './runtime.js';
import { domainModules } from './modules/index.js';
import { bootstrap, type BootstrapResult } from './modules/tenancy/bootstrap.js';
import { createRequestContext, documentErrorsPlugin, inputGuardPlugin, maskingPlugin, schema } from '../schema/index.js';
import { sharedSubscriptionPlugin } from '../schema/shared-subscription.js';
import { restHandler } from '../rest/handler.js';

export interface App {
  runtime: Runtime;
  /**
   * The app as a node:http listener (what servers mount): REST under /v1 answered by the REST
   * layer, everything else by Yoga (src/http/front-door.ts). Named for what it once was.
   */
  yoga: RequestListener;
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
    graphqlEndpoint: GRAPHQL_PATH,
    landingPage: false,
    logging: false,
    graphiql: { title: 'Gatehouse', subscriptionsProtocol: 'GRAPHQL_SSE' },
    renderGraphiQL: offlineGraphiQL,
    context: ({ request }) => createRequestContext(runtime, request),
    // Masking happens in maskingPlugin, which knows the request id; Yoga's would not.
    maskedErrors: false,
    plugins: [
      ...edgePlugins(runtime),
      consolePlugin(),
      maskingPlugin(),
      // A run's events are executed once per event for all subscribers, not once per subscriber.
      sharedSubscriptionPlugin(),
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
      graphqlStreamPlugin(runtime, GRAPHQL_STREAM_PATH),
    ],
  });
  const door = frontDoor(runtime, yoga, restHandler({ runtime, schema }));

  return {
    runtime,
    yoga: door.listener,
    bootstrapResult,
    fetch: door.fetch,
    close: () => runtime.close(),
  };
}
