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
 */
export async function executeSql<T = unknown>(em: EntityManager, sql: string, params: unknown[], method: 'all' | 'get' | 'run' = 'all'): Promise<T> {
  const connection = em.getConnection() as unknown as {
    execute(sql: string, params: unknown[], method: 'all' | 'get' | 'run', ctx?: unknown): Promise<T>;
  };
  return connection.execute(sql, params, method, em.isInTransaction() ? em.getTransactionContext() : undefined);
}

interface RawConnection {
  getKnex(): { raw(sql: string, bindings: unknown[]): { transacting(trx: unknown): unknown } & PromiseLike<unknown> };
  transformRawResult<T>(result: unknown, method: 'all' | 'get' | 'run'): T;
}

/**
 * Raw SQL inside `em`'s transaction with its values bound, as MikroORM's own `execute` would run
 * it but without writing the values into the text: the run path's statements then keep one text
 * each, which SQLite keeps prepared (sqlite-driver.ts) instead of parsing every run's anew.
 * Values: strings, numbers, null, Dates (SQLite stores them as Unix ms, as MikroORM does).
 */
export async function boundSql<T>(em: EntityManager, sql: string, params: unknown[], method: 'all' | 'get' | 'run' = 'all'): Promise<T> {
  const connection = em.getConnection() as unknown as RawConnection;
  const query = connection.getKnex().raw(sql, params);
  if (em.isInTransaction()) query.transacting(em.getTransactionContext());
  return connection.transformRawResult<T>(await query, method);
}

/**
 * SQLite's `data_version` of `em`'s connection: it changes when another connection (another
 * process on the same file) has committed since the last call, never for this connection's own
 * commits. Caches of this process compare it to know when to drop what they hold.
 */
export async function dataVersion(em: EntityManager): Promise<number> {
  const row = await executeSql<{ data_version: number } | undefined>(em, 'pragma data_version', [], 'get');
  return Number(row?.data_version ?? 0);
}
