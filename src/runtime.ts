import type { EntityManager } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/sqlite';
import type { DestinationStream } from 'pino';
import { ApiKeyCache } from './auth/api-keys.js';
import { sqliteFile, type Config } from './config.js';
import { openOrm } from './db/orm.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createLogger, type Logger } from './lib/logger.js';
import { Metrics } from './lib/metrics.js';
import { PubSub } from './lib/pubsub.js';
import { loadSecretKey } from './lib/secret-key.js';
import type { DomainModule } from './modules/module.js';
import { domainModules } from './modules/index.js';

/** Everything long-lived that one app instance owns. Requests and jobs reach it through their context. */
export interface Runtime {
  config: Config;
  orm: MikroORM;
  logger: Logger;
  clock: Clock;
  pubsub: PubSub;
  metrics: Metrics;
  apiKeys: ApiKeyCache;
  secretKey: Buffer;
  modules: DomainModule[];
  /** Aborted when the app shuts down: open streams and background jobs end on it. */
  shutdown: AbortSignal;
  /** Aborts `shutdown` (ends streams) without closing the database yet. */
  beginShutdown(): void;
  /** A fresh EntityManager for a request or a background job. */
  fork(): EntityManager;
  /** One instance per app of a domain's long-lived helper (executor, caches, limiters). */
  singleton<T>(key: string, create: () => T): T;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  clock?: Clock;
  logDestination?: DestinationStream;
  onQuery?: (sql: string) => void;
  modules?: DomainModule[];
  processMetrics?: boolean;
}

export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const modules = options.modules ?? domainModules;
  const file = sqliteFile(config);
  const orm = await openOrm({ file, entities: modules.flatMap((m) => m.entities), onQuery: options.onQuery });
  const shutdownController = new AbortController();
  const singletons = new Map<string, unknown>();
  const runtime: Runtime = {
    config,
    orm,
    logger: createLogger(config.LOG_LEVEL, options.logDestination),
    clock: options.clock ?? systemClock,
    pubsub: new PubSub(),
    metrics: new Metrics({ processMetrics: options.processMetrics }),
    apiKeys: new ApiKeyCache(config.API_KEY_CACHE_TTL_MS),
    secretKey: loadSecretKey(config.GATEWAY_SECRET_KEY, file),
    modules,
    shutdown: shutdownController.signal,
    beginShutdown: () => shutdownController.abort(),
    fork: () => orm.em.fork(),
    singleton<T>(key: string, create: () => T): T {
      if (!singletons.has(key)) singletons.set(key, create());
      return singletons.get(key) as T;
    },
    async close() {
      shutdownController.abort();
      for (const module of [...modules].reverse()) await module.stop?.(runtime);
      await orm.close(true);
    },
  };
  return runtime;
}

export async function startModules(runtime: Runtime): Promise<void> {
  for (const module of runtime.modules) await module.start?.(runtime);
}
