import { ChangeSetType, RawQueryFragment, TransactionEventBroadcaster, TransactionManager, UnitOfWork, type AnyEntity, type EntityName, type FilterQuery, type FindOptions, type ForkOptions, type MetadataStorage, type Transaction, type TransactionOptions } from '@mikro-orm/core';
import { SqlEntityManager } from '@mikro-orm/knex';

/**
 * What this file reaches of MikroORM 6.6's private state (the versions are pinned in
 * package-lock.json; test/unit/db/entity-manager.test.ts breaks if they move).
 */
interface EmInternals {
  useContext: boolean;
  disableTransactions: boolean;
  transactionContext?: Transaction;
  unitOfWork: UnitOfWork;
  eventManager: { getSubscribers(): Set<unknown> };
  metadata: MetadataStorage;
  config: { sync(): void; get(key: 'subscribers'): Set<unknown> | unknown[] };
}

interface UowInternals {
  working: boolean;
  flushQueue: (() => Promise<void>)[];
  doCommit(): Promise<void>;
  postCommitCleanup(): void;
  persistStack: Set<AnyEntity>;
  removeStack: Set<AnyEntity>;
  orphanRemoveStack: Set<AnyEntity>;
  collectionUpdates: Set<unknown>;
  extraUpdates: Set<unknown>;
}

const internals = (em: EntityManager) => em as unknown as EmInternals;

/**
 * Whether no code of the application can run inside a flush: no event subscriber and no entity
 * lifecycle hook. MikroORM marks a flush's async context (an AsyncLocalStorage) only for such code
 * (it may not flush again, and its finds skip auto-flush); without any, the mark is never read.
 */
const hookless = new WeakMap<MetadataStorage, boolean>();
function withoutHooks(em: EntityManager): boolean {
  const { metadata, config } = internals(em);
  let known = hookless.get(metadata);
  if (known === undefined) {
    const subscribers = config.get('subscribers');
    const none = Array.isArray(subscribers) ? subscribers.length === 0 : subscribers.size === 0;
    known = none && Object.values(metadata.getAll()).every((meta) => Object.values(meta.hooks ?? {}).every((hooks) => !hooks?.length));
    hookless.set(metadata, known);
  }
  return known;
}

/**
 * MikroORM's unit of work without its AsyncLocalStorage. MikroORM runs every flush inside
 * `AsyncLocalStorage.run`, and the first `run` turns on Node 20's promise hooks for the whole
 * process, for good: from then on every promise of every request pays an init hook (~8% of the
 * allocations of a streamed run). The storage only tells code running inside a flush (hooks,
 * subscribers) that it is inside one; with neither (`withoutHooks`) a flush is the same without
 * it: one at a time per unit of work, a flush asked for meanwhile queued after it.
 */
class PlainUnitOfWork extends UnitOfWork {
  /** Called after each successful flush, its change sets still there (transactional's deletion handler). */
  afterFlush: ((uow: UnitOfWork) => void) | undefined;

  override async commit(): Promise<void> {
    const self = this as unknown as UowInternals;
    const once = async () => {
      await self.doCommit();
      this.afterFlush?.(this);
    };
    if (self.working) return new Promise<void>((resolve, reject) => self.flushQueue.push(() => once().then(resolve, reject)));
    try {
      self.working = true;
      await once();
      while (self.flushQueue.length) await self.flushQueue.shift()!();
    } finally {
      self.postCommitCleanup();
      self.working = false;
    }
  }

  /** Whether a flush would find nothing to write: nothing managed, persisted, removed or queued. */
  isClean(): boolean {
    const self = this as unknown as UowInternals;
    return (
      this.getIdentityMap()[Symbol.iterator]().next().done === true &&
      self.persistStack.size === 0 &&
      self.removeStack.size === 0 &&
      self.orphanRemoveStack.size === 0 &&
      self.collectionUpdates.size === 0 &&
      self.extraUpdates.size === 0
    );
  }
}

/**
 * The application's EntityManager (every fork is one): MikroORM's, with a cheaper path where the
 * application spends it on every request — MikroORM's own stays for what this one doesn't cover.
 * - Flushes without an AsyncLocalStorage (`PlainUnitOfWork`), so Node's promise hooks stay off.
 * - `transactional` with no options on a fork (how the application calls it: each request and job
 *   forks its own manager) does what MikroORM's does — a fork of this manager holding its
 *   entities, the callback, a flush, the fork's entities merged back, deletions unset here; nested:
 *   a savepoint — without what it only needs for managers resolved from the async context (its
 *   AsyncLocalStorage `TransactionContext`), nor the transaction events and the cloned event
 *   manager when nothing listens, nor the flush when the fork has nothing to write.
 * - `fork` without MikroORM's configuration re-sync (it sets an option twice per fork, and each
 *   set rewrites `process.env.MIKRO_ORM_COLORS`).
 * - `findAndCount` without the AsyncLocalStorage MikroORM keeps raw fragments alive in, when there
 *   are none.
 * With an event subscriber or an entity hook, MikroORM's own paths are used throughout.
 */
export class EntityManager extends SqlEntityManager {
  constructor(...args: ConstructorParameters<typeof SqlEntityManager>) {
    super(...args);
    if (withoutHooks(this)) internals(this).unitOfWork = new PlainUnitOfWork(this);
  }

  override fork(options?: ForkOptions): this {
    const config = internals(this).config;
    const sync = config.sync;
    config.sync = noop;
    try {
      return super.fork(options);
    } finally {
      config.sync = sync;
    }
  }

  override async transactional<T>(cb: (em: this) => T | Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const self = internals(this);
    if (self.useContext || self.disableTransactions || !(self.unitOfWork instanceof PlainUnitOfWork) || hasAny(options)) return super.transactional(cb, options);
    const ctx = self.transactionContext;
    const fork = this.fork({ clear: false });
    const uow = internals(fork).unitOfWork as PlainUnitOfWork;
    uow.afterFlush = (flushed) => {
      for (const cs of flushed.getChangeSets()) {
        if (cs.type === ChangeSetType.DELETE || cs.type === ChangeSetType.DELETE_EARLY) self.unitOfWork.unsetIdentity(cs.entity);
      }
    };
    const eventBroadcaster = internals(fork).eventManager.getSubscribers().size ? new TransactionEventBroadcaster(fork, undefined, { topLevelTransaction: !ctx }) : undefined;
    return fork.getConnection().transactional(
      async (trx) => {
        fork.setTransactionContext(trx);
        const result = await cb(fork);
        if (!uow.isClean()) {
          await fork.flush();
          mergeEntitiesToParent(fork, this);
        }
        return result;
      },
      { ctx, eventBroadcaster },
    );
  }

  override async findAndCount<Entity extends object, Hint extends string = never, Fields extends string = '*', Excludes extends string = never>(
    entityName: EntityName<Entity>,
    where: FilterQuery<NoInfer<Entity>>,
    options: FindOptions<Entity, Hint, Fields, Excludes> = {},
  ) {
    // A raw fragment in use: MikroORM's run keeps it alive until both queries have read it.
    if (RawQueryFragment.checkCacheSize() > 0 || !(internals(this).unitOfWork instanceof PlainUnitOfWork)) return super.findAndCount(entityName, where, options);
    await this.tryFlush(entityName, options);
    options.flushMode = 'commit'; // as MikroORM's: no second auto-flush
    return Promise.all([this.find(entityName, where, options), this.count(entityName, where, options)]);
  }
}

/** MikroORM's own merge of a transaction fork's entities into its parent (TransactionManager). */
function mergeEntitiesToParent(fork: EntityManager, parent: EntityManager): void {
  (new TransactionManager(parent) as unknown as { mergeEntitiesToParent(fork: EntityManager, parent: EntityManager): void }).mergeEntitiesToParent(fork, parent);
}

function hasAny(options: TransactionOptions): boolean {
  for (const key in options) if (options[key as keyof TransactionOptions] !== undefined) return true;
  return false;
}

function noop(): void {}
