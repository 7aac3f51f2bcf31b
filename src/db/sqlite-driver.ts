import { EventType, Utils, type AnyEntity, type Configuration, type Dictionary, type EntityData, type IsolationLevel, type LoggingOptions, type LogContext, type QueryResult, type Transaction, type TransactionEventBroadcaster, type TransactionEventType } from '@mikro-orm/core';
import { AbstractSqlDriver, BetterSqliteKnexDialect, type AbstractSqlConnection, type AbstractSqlPlatform, type CheckDef, type Knex } from '@mikro-orm/knex';
import { BetterSqliteConnection, BetterSqlitePlatform, BetterSqliteSchemaHelper } from '@mikro-orm/better-sqlite';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SqliteTransaction, waitingForLock, type Database, type PoolClient, type Statement } from './sqlite-transaction.js';

export { BUSY_WAIT_MS } from './sqlite-transaction.js';

/**
 * better-sqlite3 runs on the main thread, so SQLite's own busy timeout would block the whole
 * process while another connection (another process on the same file) holds the write lock —
 * and would deadlock two apps sharing a file in one process. Instead the busy timeout is 0 and a
 * statement refused with SQLITE_BUSY is retried after an asynchronous pause (`waitingForLock`), but
 * only where a retry is sound: outside a transaction (nothing was done yet) or at its BEGIN.
 * Transactions begin IMMEDIATE (taking the write lock up front), so a statement inside one is never
 * refused for a lock another connection took after it began.
 */
class Dialect extends BetterSqliteKnexDialect {
  declare config: { onStatement?: (sql: string) => void };
  /** The connections this client has open (its pool keeps one: see orm.ts), and that one if so. */
  private readonly databases = new Set<Database>();
  only: Database | undefined;

  async acquireRawConnection(): Promise<Database> {
    const db = await (super.acquireRawConnection as () => Promise<Database>).call(this);
    reusePreparedStatements(db);
    this.databases.add(db);
    this.only = this.databases.size === 1 ? db : undefined;
    return db;
  }

  async destroyRawConnection(db: Database): Promise<void> {
    this.databases.delete(db);
    this.only = this.databases.size === 1 ? [...this.databases][0] : undefined;
    await (super.destroyRawConnection as (db: Database) => Promise<void>).call(this, db);
  }

  async _query(connection: Database, obj: { sql: string }): Promise<unknown> {
    const begin = /^\s*begin\s*;?\s*$/i.test(obj.sql);
    if (begin) obj.sql = 'begin immediate';
    this.config.onStatement?.(obj.sql);
    const query = (super._query as (connection: unknown, obj: unknown) => Promise<unknown>).bind(this);
    return waitingForLock(() => query(connection, obj), () => begin || !connection.inTransaction);
  }
}

/** Statement texts kept prepared per connection, and texts remembered as seen once; the oldest go first past these. */
const PREPARED_LIMIT = 200;
const SEEN_LIMIT = 2_000;
/**
 * Longer texts are neither kept nor remembered: a multi-row insert or a long list, whose text
 * rarely comes back and whose prepared program is large (up to 200 of them would stay in memory).
 */
const KEPT_TEXT_LIMIT = 8_000;

/**
 * knex's better-sqlite3 dialect prepares every statement it runs, each time (a parse and plan by
 * SQLite, the largest single cost of a small query here). Statements bind their values
 * (`SqliteConnection.execute`), so a query's text comes back each time it runs, as do `begin
 * immediate` and `commit`; a text written with its values (a list, MikroORM's way) is seen once,
 * so it is remembered as seen but not kept. A text seen a second time is kept
 * prepared on its connection from then on. A prepared statement is only run synchronously (`all`,
 * `run`), never iterated, so one object serves every caller; SQLite prepares it again by itself if
 * the schema changed since.
 */
function reusePreparedStatements(db: Database): void {
  const prepare = db.prepare.bind(db);
  const prepared = new Map<string, Statement>();
  const seen = new Set<string>();
  db.prepare = (sql: string): Statement => {
    if (sql.length > KEPT_TEXT_LIMIT) return prepare(sql);
    const kept = prepared.get(sql);
    if (kept !== undefined) return kept;
    const statement = prepare(sql);
    if (seen.delete(sql)) keep(prepared, sql, statement, PREPARED_LIMIT);
    else keep(seen, sql, sql, SEEN_LIMIT);
    return statement;
  };
}

function keep<V>(into: Map<string, V> | Set<string>, key: string, value: V, limit: number): void {
  if (into.size >= limit) into.delete(into.keys().next().value!);
  if (into instanceof Map) into.set(key, value);
  else into.add(key);
}

/** SQLite's limit on a statement's bound values (SQLITE_MAX_VARIABLE_NUMBER, 32766 since 3.32). */
const MAX_BOUND_VALUES = 32_766;

/**
 * Bound values larger than this in all (characters of text, bytes of a Buffer) make a statement
 * wait one turn of the event loop before it runs: a statement carrying a megabyte of text takes
 * milliseconds, and running directly it would share its turn with the statements and work around
 * it (a run request writes its thread's messages, the run and its events back to back), so no
 * turn holds two of them and other requests get in between. Small statements keep the direct path.
 */
const LARGE_VALUES = 64 * 1024;

/** The part of a knex transaction (MikroORM's transaction context when knex's) this file uses. */
interface KnexTransaction {
  isCompleted(): boolean;
}

/** How a transaction ends: its events, what it runs, what MikroORM logs for it (outermost, nested). */
interface End {
  before: TransactionEventType;
  after: TransactionEventType;
  run(trx: SqliteTransaction): Promise<void>;
  sql(platform: AbstractSqlPlatform): string;
  nestedSql(platform: AbstractSqlPlatform, savepoint: string): string;
}

const ENDS: Record<'commit' | 'rollback', End> = {
  commit: {
    before: EventType.beforeTransactionCommit,
    after: EventType.afterTransactionCommit,
    run: (trx) => trx.commit(),
    sql: (platform) => platform.getCommitTransactionSQL(),
    nestedSql: (platform, savepoint) => platform.getReleaseSavepointSQL(savepoint),
  },
  rollback: {
    before: EventType.beforeTransactionRollback,
    after: EventType.afterTransactionRollback,
    run: (trx) => trx.rollback(),
    sql: (platform) => platform.getRollbackTransactionSQL(),
    nestedSql: (platform, savepoint) => platform.getRollbackToSavepointSQL(savepoint),
  },
};

/** MikroORM's options to `Connection.begin`. */
interface BeginOptions {
  isolationLevel?: IsolationLevel;
  readOnly?: boolean;
  ctx?: Knex.Transaction;
  eventBroadcaster?: TransactionEventBroadcaster;
  loggerContext?: LogContext;
}

export class SqliteConnection extends BetterSqliteConnection {
  override createKnex(): void {
    this.client = this.createKnexClient(Dialect as unknown as string);
    this.connected = true;
  }

  /**
   * Every transaction (`em.transactional`, a flush's own, the migrator's) is a `SqliteTransaction`:
   * begun, ended and nested on the connection itself instead of through a knex transaction, with
   * the same isolation, nesting and lock waiting (see there). MikroORM's begin/commit/rollback
   * around it are kept: its transaction events and query log. A transaction asking for an
   * isolation level or read-only mode, or nested in a knex one, stays knex's.
   */
  override async begin(options: BeginOptions = {}): Promise<Knex.Transaction> {
    const { ctx: parent, eventBroadcaster, loggerContext } = options;
    if (options.isolationLevel || options.readOnly || (parent && !(parent instanceof SqliteTransaction))) return super.begin(options);
    if (parent) {
      const child = await parent.nest();
      this.logQuery(this.platform.getSavepointSQL(child.savepoint), loggerContext);
      return child as unknown as Knex.Transaction;
    }
    await eventBroadcaster?.dispatchEvent(EventType.beforeTransactionStart);
    const trx = await SqliteTransaction.begin(this.dialect as unknown as PoolClient);
    for (const query of this.platform.getBeginTransactionSQL(options)) this.logQuery(query, loggerContext);
    try {
      await eventBroadcaster?.dispatchEvent(EventType.afterTransactionStart, trx as never);
    } catch (error) {
      // Nothing would end it (MikroORM's transactional calls begin outside its try), holding the connection.
      await trx.rollback();
      throw error;
    }
    return trx as unknown as Knex.Transaction;
  }

  override async commit(ctx: Knex.Transaction, eventBroadcaster?: TransactionEventBroadcaster, loggerContext?: LogContext): Promise<void> {
    const trx = ctx as unknown;
    if (!(trx instanceof SqliteTransaction)) return super.commit(ctx, eventBroadcaster, loggerContext);
    return this.end(trx, ENDS.commit, eventBroadcaster, loggerContext);
  }

  override async rollback(ctx: Knex.Transaction, eventBroadcaster?: TransactionEventBroadcaster, loggerContext?: LogContext): Promise<void> {
    const trx = ctx as unknown;
    if (!(trx instanceof SqliteTransaction)) return super.rollback(ctx, eventBroadcaster, loggerContext);
    return this.end(trx, ENDS.rollback, eventBroadcaster, loggerContext);
  }

  /** Ends `trx` as MikroORM's commit and rollback end a knex one: an outermost one's events around it, then its log line. */
  private async end(trx: SqliteTransaction, end: End, eventBroadcaster?: TransactionEventBroadcaster, loggerContext?: LogContext): Promise<void> {
    if (!trx.nested) await eventBroadcaster?.dispatchEvent(end.before, trx as never);
    await end.run(trx);
    this.logQuery(trx.nested ? end.nestedSql(this.platform, trx.savepoint) : end.sql(this.platform), loggerContext);
    if (!trx.nested) await eventBroadcaster?.dispatchEvent(end.after, trx as never);
  }

  /**
   * A statement given as text runs with its values bound, inside `ctx` (a transaction context)
   * when given: raw SQL (src/db/sql.ts, MikroORM's `execute`) and MikroORM's query builders, which
   * call this with their compiled text and bindings. knex's path (raw query, runner, pool,
   * transaction client: promises and objects per statement) costs several times the statement
   * itself, and MikroORM writes the values into the text (a new text to prepare each time), so
   * where it is sound the statement runs directly on the better-sqlite3 connection, prepared once
   * (`reusePreparedStatements`):
   * - inside `ctx`: on the transaction's connection, while the transaction is open;
   * - outside a transaction: on the pool's single connection when no transaction is open on it.
   *   better-sqlite3 runs a statement synchronously, so it cannot interleave with another's; a
   *   statement waiting for an open transaction (or for another process's write lock: SQLITE_BUSY)
   *   takes knex's path, which queues for the connection and waits for the lock (Dialect._query).
   * Values as knex's better-sqlite3 dialect and MikroORM bind them (`bindable`); a list, which
   * neither binds, `??` (an identifier placeholder), knex objects and more values than SQLite
   * binds in one statement go MikroORM's way. MikroORM's
   * `onQuery` option applies; its query logger (`debug`, unused here) sees only MikroORM's way.
   * A failure's message starts with the statement's text, as knex's do (without the values).
   * Large values wait a turn of the event loop first (LARGE_VALUES).
   */
  override async execute<T extends QueryResult | EntityData<AnyEntity> | EntityData<AnyEntity>[] = EntityData<AnyEntity>[]>(
    query: string | Knex.QueryBuilder | Knex.Raw,
    params: unknown[] = [],
    method: 'all' | 'get' | 'run' = 'all',
    ctx?: Transaction,
    loggerContext?: LoggingOptions,
  ): Promise<T> {
    const values = typeof query === 'string' && !query.includes('??') && params.length <= MAX_BOUND_VALUES ? bindable(params) : null;
    if (!values) return super.execute<T>(query, params, method, ctx, loggerContext);
    const sql = this.config.get('onQuery')(query as string, params);
    if (sizeOf(values) > LARGE_VALUES) await nextTurn();
    const db = this.directConnection(ctx as KnexTransaction | SqliteTransaction | undefined, sql);
    if (!db) return this.executeThroughKnex<T>(sql, values, method, ctx);
    let result: unknown;
    try {
      const statement = db.prepare(sql);
      result = statement.reader ? statement.all(values) : statement.run(values);
    } catch (error) {
      if (!ctx && (error as { code?: string }).code === 'SQLITE_BUSY') return this.executeThroughKnex<T>(sql, values, method, ctx);
      this.dialect.config.onStatement?.(sql);
      if (error instanceof Error) error.message = `${sql} - ${error.message}`;
      throw error;
    }
    this.dialect.config.onStatement?.(sql);
    return this.transformRawResult<T>(result, method);
  }

  private get dialect(): Dialect {
    return this.getKnex().client as unknown as Dialect;
  }

  /**
   * The connection a statement may run on directly now (see `execute`), or none. The pool
   * holds one connection (orm.ts), so an open transaction `ctx` is on it.
   */
  private directConnection(ctx: KnexTransaction | SqliteTransaction | undefined, sql: string): Database | undefined {
    if (ctx instanceof SqliteTransaction) return ctx.connection(sql);
    const db = this.dialect.only;
    if (!db) return undefined;
    if (ctx) return db.inTransaction && !ctx.isCompleted() ? db : undefined;
    return db.inTransaction ? undefined : db;
  }

  private async executeThroughKnex<T>(sql: string, values: unknown[], method: 'all' | 'get' | 'run', ctx?: Transaction): Promise<T> {
    const query = this.getKnex().raw(sql, values as never);
    if (ctx) query.transacting(ctx as never);
    return this.transformRawResult<T>(await query, method);
  }
}

/**
 * Values as better-sqlite3 takes them: Dates as Unix milliseconds and booleans as 0/1 (as knex's
 * dialect binds them and MikroORM stores them), plain objects as JSON (as MikroORM writes them),
 * undefined as null. Null when a value is none of these nor a string, number, bigint or Buffer.
 */
function bindable(params: readonly unknown[]): unknown[] | null {
  const values = new Array<unknown>(params.length);
  for (let i = 0; i < params.length; i++) {
    const value = params[i];
    if (value === null || value === undefined) values[i] = null;
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') values[i] = value;
    else if (typeof value === 'boolean') values[i] = Number(value);
    else if (value instanceof Date) values[i] = value.getTime();
    else if (Buffer.isBuffer(value)) values[i] = value;
    else if (Utils.isPlainObject(value)) values[i] = JSON.stringify(value);
    else return null;
  }
  return values;
}

/** The characters of the text values and the bytes of the Buffers in `values`. */
function sizeOf(values: readonly unknown[]): number {
  let size = 0;
  for (const value of values) if (typeof value === 'string' || Buffer.isBuffer(value)) size += value.length;
  return size;
}

/**
 * MikroORM 6.6's SQLite schema reader splits an enum's `check (… in ('a', 'b', 'c'))` list only
 * before its last item, so every enum with three or more values reads back as two and the schema
 * update rewrites those tables (copy, drop, rename) on every start. Reading every quoted item keeps
 * the stored schema equal to the entities, so a restart changes nothing.
 */
class SchemaHelper extends BetterSqliteSchemaHelper {
  override async getEnumDefinitions(connection: AbstractSqlConnection, _checks: CheckDef[], tableName: string, _schemaName: string, ctx?: Transaction): Promise<Dictionary<string[]>> {
    const table = await connection.execute<{ sql: string }>('select sql from sqlite_master where type = ? and name = ?', ['table', tableName], 'get', ctx);
    const enums: Dictionary<string[]> = {};
    for (const [, column, list] of table.sql.matchAll(/[`"]([^`"]+)[`"] text check \([`"][^`"]+[`"] in \(((?:'(?:[^']|'')*'(?:,\s*)?)*)\)\)/gi)) {
      enums[column] = [...list.matchAll(/'((?:[^']|'')*)'/g)].map((m) => m[1].replace(/''/g, "'"));
    }
    return enums;
  }
}

class Platform extends BetterSqlitePlatform {
  override schemaHelper: SchemaHelper = new SchemaHelper(this);
}

/**
 * `@mikro-orm/better-sqlite`'s driver with the lock waiting and the schema reader above. Pass
 * `driverOptions: { onStatement }` to see every statement sent, transaction control included.
 */
export class SqliteDriver extends AbstractSqlDriver<SqliteConnection, Platform> {
  constructor(config: Configuration) {
    super(config, new Platform(), SqliteConnection, ['knex', 'better-sqlite3']);
  }
}
