import type { AnyEntity, EntityManager, EntitySchema, MigrationObject } from '@mikro-orm/core';
import type { DestinationStream } from 'pino';
import { ApiKeyCache } from './auth/api-keys.js';
import { databaseOf, type Config } from './config.js';
import { openOrm, type Orm } from './db/orm.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createLogger, type Logger } from './lib/logger.js';
import { Metrics } from './lib/metrics.js';
import { connectPgBus } from './lib/pg-connect.js';
import { PubSub } from './lib/pubsub.js';
import { singleInstance, type Instances } from './lib/instances.js';
import { loadSecretKey } from './lib/secret-key.js';
import type { Organisation } from './modules/tenancy/organisation.entity.js';
import type { Workspace } from './modules/tenancy/workspace.entity.js';

/** Everything long-lived that one app instance owns. Requests and jobs reach it through their context. */
export interface Runtime {
  config: Config;
  orm: Orm;
  logger: Logger;
  clock: Clock;
  pubsub: PubSub;
  /** The other gateway instances on the database, and which one runs the sweeps (src/lib/instances.ts). */
  instances: Instances;
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

/**
 * What a domain plugs into the application: its entities, what it does when a workspace is created
 * (in the same transaction), what it seeds on first start, and long-lived work (executors, sweeps)
 * started with the app and stopped with it. It lives beside `Runtime` because each refers to the
 * other; the list itself is `domainModules` in src/modules/index.ts, handed in by the caller.
 */
export interface DomainModule {
  name: string;
  entities: EntitySchema<AnyEntity, never>[] | EntitySchema<any, any>[];
  /** Data migrations (backfills), each applied once after the schema migrations and recorded with them (src/db/migrate.ts). */
  migrations?: MigrationObject[];
  /** Runs inside the transaction that creates the workspace. */
  onWorkspaceCreated?(em: EntityManager, workspace: Workspace, runtime: Runtime): Promise<void>;
  /** Runs once, inside the first-start transaction, after the default organisation and workspace. */
  onBootstrap?(em: EntityManager, organisation: Organisation, workspace: Workspace, runtime: Runtime): Promise<void>;
  start?(runtime: Runtime): Promise<void> | void;
  stop?(runtime: Runtime): Promise<void> | void;
}

export interface RuntimeOptions {
  clock?: Clock;
  logDestination?: DestinationStream;
  onQuery?: (sql: string) => void;
  processMetrics?: boolean;
}

/**
 * `modules` comes from the caller (the app, the CLI) rather than from an import here: every service
 * depends on `Runtime`, so the runtime must not depend on the services.
 */
export async function createRuntime(config: Config, modules: DomainModule[], options: RuntimeOptions = {}): Promise<Runtime> {
  const database = databaseOf(config);
  const orm = await openOrm({
    database,
    entities: modules.flatMap((m) => m.entities),
    migrations: modules.flatMap((m) => m.migrations ?? []),
    migrate: config.DB_MIGRATE,
    onQuery: options.onQuery,
  });
  const shutdownController = new AbortController();
  const singletons = new Map<string, unknown>();
  const logger = createLogger(config.LOG_LEVEL, options.logDestination, config.LOG_FORMAT);
  // PostgreSQL may have several instances: they talk over a dedicated connection. SQLite has one.
  const bus = database.dialect === 'postgresql' ? await connectPgBus(orm, logger).catch(async (error: unknown) => {
    await orm.close(true);
    throw error;
  }) : null;
  const pubsub = new PubSub(bus ?? undefined);
  const runtime: Runtime = {
    config,
    orm,
    logger,
    clock: options.clock ?? systemClock,
    pubsub,
    instances: bus ?? singleInstance,
    metrics: new Metrics({ processMetrics: options.processMetrics }),
    apiKeys: new ApiKeyCache(config.API_KEY_CACHE_TTL_MS, pubsub),
    secretKey: loadSecretKey(config.GATEWAY_SECRET_KEY, database.dialect === 'sqlite' ? database.file : null),
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
      await bus?.close();
      await orm.close(true);
    },
  };
  return runtime;
}

export async function startModules(runtime: Runtime): Promise<void> {
  for (const module of runtime.modules) await module.start?.(runtime);
}
