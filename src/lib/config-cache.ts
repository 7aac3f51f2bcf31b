import type { EntityManager } from '@mikro-orm/core';
import { dataVersion } from '../db/sql.js';
import { BUS_RECONNECTED_TOPIC } from './pubsub.js';
import { setBounded } from './bounded-map.js';

/**
 * In-memory copies of configuration that the data path reads on every request and that rarely
 * changes. Each entry belongs to a scope; a service that writes what a scope is built from calls
 * `invalidate(scope)` once its write is done, which drops the whole scope (writes are rare, so a
 * coarse drop keeps the rule simple: no entry can outlive a write it depends on).
 *
 * Several processes on one database:
 * - PostgreSQL (instances linked by the pub/sub's bus, src/lib/pg-bus.ts): every invalidation is
 *   published, and each instance drops the same scope when it hears it (`linkCache`), within
 *   milliseconds of the write. `syncWith` then asks nothing.
 * - SQLite (one server per file, but the CLI may write beside it): readers call `syncWith(em)`
 *   before reading (once per EntityManager, i.e. per request or job: it asks the database's
 *   `data_version`, src/db/sql.ts), and any commit by another connection drops everything.
 */
export type CacheScope =
  /** A workspace's provider by virtual key, with its integration and the workspace's access. */
  | 'providers'
  /** A workspace's active usage-limit policies matching a request's terms. */
  | 'policies'
  /** A caller's home workspace (a workspace key's own, an organisation key's default). */
  | 'workspaces'
  /** An assistant by id (what a new run copies from it). */
  | 'assistants'
  /** A provider's guardrail refs resolved in a workspace (each guardrail at its current version). */
  | 'guardrails';

type Listener = (scope: CacheScope) => void;

/** Entries per scope; keys can carry request values (policy lookups), so the oldest go first. */
const MAX_ENTRIES = 10_000;

export class ConfigCache {
  private readonly scopes = new Map<CacheScope, Map<string, Promise<unknown>>>();
  private readonly listeners = new Set<Listener>();
  private version: number | null = null;
  private readonly synced = new WeakMap<EntityManager, Promise<void>>();

  /** `linked`: invalidations reach this cache from every instance (see `linkCache`), so no data_version is asked. */
  constructor(private readonly linked = false) {}

  /**
   * `sync` with `em`'s connection, asked once per EntityManager (a request's, a job's fork): one
   * `pragma data_version` serves every cached read of a request, including reads that start
   * together (they share the pending question). A failed question is asked again next time.
   */
  syncWith(em: EntityManager): Promise<void> {
    if (this.linked) return Promise.resolve();
    let syncing = this.synced.get(em);
    if (!syncing) {
      syncing = dataVersion(em).then((version) => this.sync(version));
      this.synced.set(em, syncing);
      syncing.catch(() => this.synced.delete(em));
    }
    return syncing;
  }

  /** Drops every scope when `version` (the database's data_version) moved since the last call. */
  sync(version: number): void {
    if (this.version !== null && version !== this.version) this.invalidateAll();
    this.version = version;
  }

  /**
   * The cached value, or `load()`'s (shared by concurrent callers). A failed load is not kept. A
   * load that an invalidation overtakes answers its own callers but is not kept either.
   */
  get<T>(scope: CacheScope, key: string, load: () => Promise<T>): Promise<T> {
    let entries = this.scopes.get(scope);
    if (!entries) this.scopes.set(scope, (entries = new Map()));
    const cached = entries.get(key);
    if (cached) return cached as Promise<T>;
    const loading = load();
    setBounded(entries, key, loading, MAX_ENTRIES);
    const forget = () => {
      if (entries.get(key) === loading) entries.delete(key);
    };
    loading.catch(forget);
    return loading;
  }

  invalidate(scope: CacheScope, options: { remote?: boolean } = {}): void {
    this.scopes.delete(scope);
    if (options.remote) return;
    for (const listener of this.listeners) listener(scope);
  }

  /** Drops every scope (another writer's changes are unknown: a new data version, missed messages). */
  invalidateAll(): void {
    this.scopes.clear();
  }

  /** Called with each local invalidation; returns the unsubscribe function. */
  onInvalidate(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** The topic on which invalidations travel between instances. */
export const CACHE_INVALIDATED_TOPIC = 'config-cache.invalidated';

export interface CacheHost {
  singleton<T>(key: string, create: () => T): T;
  pubsub: { crossesInstances: boolean; publish(topic: string, payload: unknown): void; on(topic: string, handler: (payload: unknown) => void): unknown };
}

/**
 * Publishes the cache's invalidations and applies everyone's, when the pub/sub crosses instances.
 * Its own come back too and drop the scope a second time, which costs a reload at most.
 */
function linkCache(cache: ConfigCache, pubsub: CacheHost['pubsub']): ConfigCache {
  if (!pubsub.crossesInstances) return cache;
  cache.onInvalidate((scope) => pubsub.publish(CACHE_INVALIDATED_TOPIC, scope));
  pubsub.on(CACHE_INVALIDATED_TOPIC, (scope) => cache.invalidate(scope as CacheScope, { remote: true }));
  // Invalidations sent while the bus was disconnected are lost: whatever changed meanwhile is unknown.
  pubsub.on(BUS_RECONNECTED_TOPIC, () => cache.invalidateAll());
  return cache;
}

/** The app's cache (one per runtime). */
export function configCache(runtime: CacheHost): ConfigCache {
  return runtime.singleton('config-cache', () => linkCache(new ConfigCache(runtime.pubsub.crossesInstances), runtime.pubsub));
}
