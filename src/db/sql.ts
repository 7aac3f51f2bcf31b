import type { EntityManager } from '@mikro-orm/core';

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
