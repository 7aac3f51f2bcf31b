import { openOrm } from '../src/db/orm.js';
import { domainModules } from '../src/modules/index.js';
import { RUN_ENV, TEST_DATABASE_PREFIX, TEST_DATABASE_URL, adminStatement, closeAdmin, databaseUrl, templateDatabase } from './helpers/database.js';

/** A run's databases left behind this long ago (a killed run) are dropped by the next run. */
const LEFTOVER_MS = 6 * 3_600_000;

/**
 * Vitest global setup. With TEST_DATABASE_URL: names the run, drops the databases of runs long
 * gone, then builds the template every test app's database of this run is copied from (migrated
 * once here instead of by each app); drops this run's databases at the end. Without it: nothing
 * (the suite runs on SQLite).
 */
export async function setup(): Promise<void> {
  if (!TEST_DATABASE_URL) return;
  // The run's id is its start time: other runs on the server (another developer's, another
  // checkout's) keep their databases; those of runs long gone are dropped.
  process.env[RUN_ENV] = String(Date.now());
  await dropTestDatabases((run) => run < Date.now() - LEFTOVER_MS);
  // Byte-order text comparison, as SQLite's: names and keys sort the same on both.
  await adminStatement(`create database "${templateDatabase()}" template template0 encoding 'UTF8' lc_collate 'C' lc_ctype 'C'`);
  const orm = await openOrm({
    database: { dialect: 'postgresql', url: databaseUrl(templateDatabase()) },
    entities: domainModules.flatMap((m) => m.entities),
    migrations: domainModules.flatMap((m) => m.migrations ?? []),
  });
  await orm.close(true);
}

export async function teardown(): Promise<void> {
  if (!TEST_DATABASE_URL) return;
  const mine = Number(process.env[RUN_ENV]);
  await dropTestDatabases((run) => run === mine);
  await closeAdmin();
}

/** Drops the test databases of the runs `which` picks (by the run id in their names). */
async function dropTestDatabases(which: (run: number) => boolean): Promise<void> {
  const rows = await adminStatement<Array<{ datname: string }>>('select datname from pg_database where datname like ?', [`${TEST_DATABASE_PREFIX}%`]);
  for (const { datname } of rows) {
    const run = Number(datname.slice(TEST_DATABASE_PREFIX.length).split('_')[0]);
    if (Number.isFinite(run) && which(run)) await adminStatement(`drop database if exists "${datname}" with (force)`);
  }
}
