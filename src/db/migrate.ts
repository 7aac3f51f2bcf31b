import type { MikroORM } from '@mikro-orm/core';
import type { Migrator } from '@mikro-orm/migrations';
import { PostgresDriver } from './postgres-driver.js';

export type MigrateMode = 'auto' | 'off';

/**
 * The first schema migration: exactly the schema that releases before versioned migrations made
 * with `updateSchema` on every start. Such a database (its tables there, no migration recorded) is
 * recorded as being at this migration, and the later ones upgrade it.
 */
export const BASELINE_MIGRATION = '0001_initial';

/** Any number, the same in every instance: PostgreSQL's advisory lock that serialises migrating. */
const MIGRATION_LOCK = 4_207_281_517;

/**
 * Applies the pending migrations (schema ones of src/db/migrations/<dialect>/, then the modules'
 * data migrations) in one transaction: all or none is recorded in `mikro_orm_migrations`. With
 * `off`, pending migrations are an error naming them. Returns the names applied.
 */
export async function migrate(orm: MikroORM, mode: MigrateMode): Promise<string[]> {
  const migrator = orm.getMigrator() as Migrator;
  // One look at what is recorded serves both questions (each costs the migrator several queries, on every start).
  let pending = await migrator.getPendingMigrations();
  if (pending[0]?.name === BASELINE_MIGRATION && (await adoptUnversionedSchema(orm, migrator))) pending = pending.slice(1);
  if (pending.length === 0) return [];
  if (mode === 'off') {
    throw new Error(`The database needs migrations ${pending.map((m) => m.name).join(', ')}: run \`npm run migrate\` (or start with DB_MIGRATE=auto).`);
  }
  const applied = await (orm.em.getDriver() instanceof PostgresDriver ? upLocked(orm, migrator) : migrator.up());
  return applied.map((m) => m.name);
}

/**
 * PostgreSQL: the batch's transaction first takes an advisory lock, so instances starting together
 * take turns and the later one finds the migrations recorded. (SQLite needs none: the batch's
 * transaction begins IMMEDIATE, taking the file's write lock before it reads what is recorded; and
 * its one connection must not be given a transaction begun outside the migrator.)
 */
async function upLocked(orm: MikroORM, migrator: Migrator) {
  const connection = orm.em.getConnection();
  return connection.transactional(async (trx) => {
    await connection.execute('select pg_advisory_xact_lock(?)', [MIGRATION_LOCK], 'all', trx);
    return migrator.up({ transaction: trx });
  });
}

/** Records the baseline as applied when its tables are already there (called while nothing is recorded); true when it did. */
async function adoptUnversionedSchema(orm: MikroORM, migrator: Migrator): Promise<boolean> {
  const knex = (orm.em.getConnection() as unknown as { getKnex(): { schema: { hasTable(name: string): Promise<boolean> } } }).getKnex();
  if (!(await knex.schema.hasTable('workspaces'))) return false;
  await migrator.getStorage().logMigration({ name: BASELINE_MIGRATION, context: undefined });
  return true;
}
