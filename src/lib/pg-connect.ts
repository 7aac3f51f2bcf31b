import type { Logger } from './logger.js';
import { PgBus, type RawPgClient } from './pg-bus.js';

/** The ORM's connection, as far as opening one more raw client of its pool's kind goes. */
interface KnexBacked {
  em: { getConnection(): unknown };
}

/**
 * The instance bus on its own connection, opened by the ORM's knex client with the same settings
 * as the pool's (URL, SSL, search path) but never returned to the pool.
 */
export async function connectPgBus(orm: KnexBacked, logger: Logger): Promise<PgBus> {
  const knex = (orm.em.getConnection() as { getKnex(): { client: { acquireRawConnection(): Promise<RawPgClient> } } }).getKnex();
  const bus = new PgBus(() => knex.client.acquireRawConnection(), logger);
  await bus.start();
  return bus;
}
