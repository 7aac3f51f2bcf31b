import type { EntityManager } from '@mikro-orm/core';
import { PostgreSqlPlatform } from '@mikro-orm/postgresql';

/**
 * The SQL dialect `em` speaks, for the few statements that must differ (date functions): the rest
 * of the raw SQL is written once, in what SQLite and PostgreSQL both accept.
 */
export function dialectOf(em: EntityManager): 'sqlite' | 'postgresql' {
  return em.getPlatform() instanceof PostgreSqlPlatform ? 'postgresql' : 'sqlite';
}

/**
 * Raw SQL on an EntityManager's connection, inside its transaction when it has one. Always pass the
 * transaction's manager inside `em.transactional`: SQLite runs one connection per process, so a
 * statement sent outside the open transaction waits for it forever.
 * On SQLite the values are bound, the text kept prepared and the statement run on the connection
 * itself (`SqliteConnection.execute`, src/db/sqlite-driver.ts); on PostgreSQL MikroORM writes them
 * into the text. Values: strings, numbers, null, booleans, Dates (SQLite stores them as Unix ms,
 * as MikroORM does), plain objects (as JSON).
 */
export async function executeSql<T = unknown>(em: EntityManager, sql: string, params: unknown[], method: 'all' | 'get' | 'run' = 'all'): Promise<T> {
  return rawConnection(em).execute<T>(sql, params, method, transactionOf(em));
}

/**
 * Raw SQL inside `em`'s transaction with its values bound on every database: the run path's
 * statements keep one text each (PostgreSQL then parses no values into them; on SQLite this is
 * `executeSql`). Values as for `executeSql`.
 */
export async function boundSql<T>(em: EntityManager, sql: string, params: unknown[], method: 'all' | 'get' | 'run' = 'all'): Promise<T> {
  if (dialectOf(em) === 'sqlite') return executeSql<T>(em, sql, params, method);
  const connection = rawConnection(em);
  const ctx = transactionOf(em);
  const query = connection.getKnex().raw(sql, params);
  if (ctx) query.transacting(ctx);
  return connection.transformRawResult<T>(await query, method);
}

/**
 * A multi-row `insert into table (columns) values (?, …), …` text per row count, each built once
 * (up to `kept` rows; longer ones are built per call): the same string object every time, so the
 * connection's prepared statement is found by the hash V8 keeps on the string, where a text built
 * per statement is concatenated, then hashed whole, each time it runs.
 */
export class InsertTexts {
  private readonly head: string;
  private readonly row: string;
  private readonly texts: string[] = [];

  constructor(
    table: string,
    columns: readonly string[],
    private readonly kept = 16,
  ) {
    this.head = `insert into ${table} (${columns.join(', ')}) values `;
    this.row = `(${columns.map(() => '?').join(', ')})`;
  }

  /** The text inserting `count` rows. */
  of(count: number): string {
    const known = this.texts[count];
    if (known !== undefined) return known;
    const text = this.head + Array.from({ length: count }, () => this.row).join(', ');
    if (count <= this.kept) this.texts[count] = text;
    return text;
  }
}

interface RawConnection {
  execute<T>(sql: string, params: unknown[], method: 'all' | 'get' | 'run', ctx?: unknown): Promise<T>;
  getKnex(): { raw(sql: string, bindings: unknown[]): { transacting(trx: unknown): unknown } & PromiseLike<unknown> };
  transformRawResult<T>(result: unknown, method: 'all' | 'get' | 'run'): T;
}

const rawConnection = (em: EntityManager) => em.getConnection() as unknown as RawConnection;
const transactionOf = (em: EntityManager) => (em.isInTransaction() ? em.getTransactionContext() : undefined);

/**
 * SQLite's `data_version` of `em`'s connection: it changes when another connection (another
 * process on the same file) has committed since the last call, never for this connection's own
 * commits. Caches of this process compare it to know when to drop what they hold.
 */
export async function dataVersion(em: EntityManager): Promise<number> {
  const row = await executeSql<{ data_version: number } | undefined>(em, 'pragma data_version', [], 'get');
  return Number(row?.data_version ?? 0);
}
