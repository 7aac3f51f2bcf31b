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

/**
 * SQLite's `data_version` of `em`'s connection: it changes when another connection (another
 * process on the same file) has committed since the last call, never for this connection's own
 * commits. Caches of this process compare it to know when to drop what they hold.
 */
export async function dataVersion(em: EntityManager): Promise<number> {
  const row = await executeSql<{ data_version: number } | undefined>(em, 'pragma data_version', [], 'get');
  return Number(row?.data_version ?? 0);
}
