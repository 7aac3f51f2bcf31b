import { openOrm } from '../src/db/orm.js';
import { domainModules } from '../src/modules/index.js';
import { TEMPLATE_DATABASE, TEST_DATABASE_PREFIX, TEST_DATABASE_URL, adminStatement, closeAdmin, databaseUrl } from './helpers/database.js';

/**
 * Vitest global setup. With TEST_DATABASE_URL: drops the test databases a previous run left, then
 * builds the template every test app's database is copied from (migrated once here instead of by
 * each app); drops them all again at the end. Without it: nothing (the suite runs on SQLite).
 */
export async function setup(): Promise<void> {
  if (!TEST_DATABASE_URL) return;
  await dropTestDatabases();
  // Byte-order text comparison, as SQLite's: names and keys sort the same on both.
  await adminStatement(`create database "${TEMPLATE_DATABASE}" template template0 encoding 'UTF8' lc_collate 'C' lc_ctype 'C'`);
  const orm = await openOrm({
    database: { dialect: 'postgresql', url: databaseUrl(TEMPLATE_DATABASE) },
    entities: domainModules.flatMap((m) => m.entities),
    migrations: domainModules.flatMap((m) => m.migrations ?? []),
  });
  await orm.close(true);
}

export async function teardown(): Promise<void> {
  if (!TEST_DATABASE_URL) return;
  await dropTestDatabases();
  await closeAdmin();
}

async function dropTestDatabases(): Promise<void> {
  const rows = await adminStatement<Array<{ datname: string }>>('select datname from pg_database where datname like ?', [`${TEST_DATABASE_PREFIX}%`]);
  for (const { datname } of rows) await adminStatement(`drop database if exists "${datname}" with (force)`);
}
