import { setTimeout as sleep } from 'node:timers/promises';

/** How long a statement waits for another connection's write lock before it fails. */
export const BUSY_WAIT_MS = 10_000;

/**
 * Runs `run`, and while it is refused with SQLITE_BUSY (another connection, another process on the
 * same file, holds the write lock) and `retriable()` says a retry is sound, runs it again after an
 * asynchronous pause: the thread is never blocked waiting for the lock (see sqlite-driver.ts).
 */
export async function waitingForLock<T>(run: () => T | Promise<T>, retriable: () => boolean): Promise<T> {
  for (let pause = 1, waited = 0; ; waited += pause, pause = Math.min(pause * 2, 50)) {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || !retriable() || waited >= BUSY_WAIT_MS) throw error;
      await sleep(pause);
    }
  }
}

/** The part of a better-sqlite3 connection the SQLite driver uses. */
export interface Database {
  inTransaction: boolean;
  prepare(sql: string): Statement;
}

export interface Statement {
  /** Whether the statement returns rows (a select, a pragma, `… returning`). */
  reader: boolean;
  all(values: unknown[]): unknown[];
  run(values: unknown[]): { changes: number; lastInsertRowid: number | bigint };
}

/** What a transaction uses of the connection's knex client: its pool (of one connection) and the statement hook. */
export interface PoolClient {
  config: { onStatement?: (sql: string) => void };
  acquireConnection(): Promise<Database>;
  releaseConnection(db: Database): Promise<unknown>;
}

const BEGIN = 'begin immediate';

/**
 * A transaction run on the better-sqlite3 connection itself: `begin immediate`, `commit` and
 * `rollback` (`savepoint`, `release savepoint` and `rollback to savepoint` when nested) sent
 * directly, with none of the objects and promises of a knex transaction (a knex instance per
 * transaction, a query runner per control statement), which cost several times the statements
 * themselves. It keeps what the knex transaction gave:
 * - Isolation: it holds the pool's only connection from before `begin` to after its end, so a
 *   statement of another request queues for it (knex's path: a statement outside a transaction
 *   never runs directly while the connection is in one, `SqliteConnection.execute`).
 * - Nesting: a nested transaction is a savepoint, and nested transactions of one transaction begin
 *   one after the other (the next waits until the previous ended), as knex orders them.
 * - Its statements: `SqliteConnection.execute` runs them on `db` while it is open; a knex query
 *   given it with `.transacting(ctx)` runs on `client`. Either fails once it has ended.
 * - Lock waiting: `begin immediate` waits for another connection's write lock (`waitingForLock`),
 *   holding the pool meanwhile as knex did; inside, no statement is refused for the lock.
 */
export class SqliteTransaction {
  private completed = false;
  private knexClient: object | undefined;
  /** Ends when the last nested transaction begun in this one has ended. */
  private lastChild: Promise<void> = Promise.resolve();

  private constructor(
    private readonly pool: PoolClient,
    readonly db: Database,
    private readonly parent: SqliteTransaction | undefined,
    private readonly depth: number,
    private readonly ended: () => void,
  ) {}

  /** Takes the pool's connection (waiting for it) and begins a transaction on it. */
  static async begin(pool: PoolClient): Promise<SqliteTransaction> {
    const db = await pool.acquireConnection();
    try {
      pool.config.onStatement?.(BEGIN);
      await waitingForLock(() => exec(db, BEGIN), () => true);
    } catch (error) {
      await pool.releaseConnection(db);
      throw error;
    }
    return new SqliteTransaction(pool, db, undefined, 0, noop);
  }

  /** A transaction nested in this one (a savepoint), begun once the previous nested one has ended. */
  async nest(): Promise<SqliteTransaction> {
    const previous = this.lastChild;
    let ended!: () => void;
    this.lastChild = new Promise<void>((resolve) => (ended = resolve));
    await previous;
    const child = new SqliteTransaction(this.pool, this.db, this, this.depth + 1, ended);
    try {
      child.run(`savepoint ${child.savepoint}`, this);
    } catch (error) {
      ended();
      throw error;
    }
    return child;
  }

  /** Whether it has ended (committed, rolled back, or its outer transaction has). */
  isCompleted(): boolean {
    return this.completed || (this.parent?.isCompleted() ?? false);
  }

  /** The connection, to run a statement inside the transaction; fails once the transaction has ended. */
  connection(sql?: string): Database {
    if (this.isCompleted()) throw new Error(`${sql ? `${sql} - ` : ''}Transaction query already complete`);
    // SQLite rolls a transaction back by itself on some failures (a full disk): what follows must not run outside it.
    if (!this.db.inTransaction) throw new Error(`${sql ? `${sql} - ` : ''}The transaction was rolled back by SQLite`);
    return this.db;
  }

  /**
   * A knex client whose queries run in this transaction, for knex queries given the transaction
   * (`.transacting(ctx)` takes `ctx.client` when it is `transacting`): knex's own transaction
   * client does the same (the same connection every time, never released to the pool).
   */
  get client(): object {
    return (this.knexClient ??= Object.assign(Object.create(this.pool) as object, {
      transacting: true,
      acquireConnection: async () => this.connection(),
      releaseConnection: async () => {},
    }));
  }

  /** Commits (a nested one: releases its savepoint). If that fails with the transaction still open, `rollback` ends it. */
  async commit(): Promise<void> {
    const sql = this.parent ? `release savepoint ${this.savepoint}` : 'commit';
    try {
      this.run(sql, this);
    } catch (error) {
      if (!this.isCompleted() && !this.db.inTransaction) this.finish();
      throw error;
    }
    this.finish();
  }

  /** Rolls back what it did (a nested one: to its savepoint, which it releases); nothing when it has already ended. */
  async rollback(): Promise<void> {
    if (this.completed) return;
    try {
      if (!this.parent) {
        if (this.db.inTransaction) this.run('rollback');
      } else if (!this.parent.isCompleted() && this.db.inTransaction) {
        this.run(`rollback to savepoint ${this.savepoint}`);
        this.run(`release savepoint ${this.savepoint}`);
      }
    } finally {
      this.finish();
    }
  }

  /** Whether it is nested in another (a savepoint). */
  get nested(): boolean {
    return this.parent !== undefined;
  }

  /** Its savepoint's name when nested. */
  get savepoint(): string {
    return `trx${this.depth}`;
  }

  /** Runs a control statement, inside `within` when given (failing once that has ended). */
  private run(sql: string, within?: SqliteTransaction): void {
    const db = within ? within.connection(sql) : this.db;
    this.pool.config.onStatement?.(sql);
    exec(db, sql);
  }

  private finish(): void {
    this.completed = true;
    this.ended();
    if (!this.parent) void this.pool.releaseConnection(this.db);
  }
}

function exec(db: Database, sql: string): void {
  try {
    db.prepare(sql).run([]);
  } catch (error) {
    if (error instanceof Error) error.message = `${sql} - ${error.message}`;
    throw error;
  }
}

function noop(): void {}
