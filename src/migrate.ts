import { MikroORM, type Options } from '@mikro-orm/core';
import { loadConfig, databaseOf } from './config.js';
import { openOrm } from './db/orm.js';
import { PostgresDriver } from './db/postgres-driver.js';
import { migrationNames, statementsOf, writeMigration, type Dialect } from './db/migrations/files.js';
import { domainModules } from './modules/index.js';

/**
 * `npm run migrate`: applies the pending migrations to the database in DATABASE_URL and says which.
 * `npm run migrate -- create <name>`: after an entity change, writes the next migration of each
 * dialect: what the entities need beyond the existing migrations, never a drop (a column or table
 * going away needs a hand-written migration). SQLite is compared in memory; PostgreSQL on a scratch
 * database of the server in TEST_DATABASE_URL.
 */
const entities = domainModules.flatMap((m) => m.entities);
const migrations = domainModules.flatMap((m) => m.migrations ?? []);

async function apply(): Promise<number> {
  const loaded = loadConfig();
  if (!loaded.ok) {
    console.error(`Invalid configuration:\n${loaded.problems.join('\n')}`);
    return 1;
  }
  let applied: string[] = [];
  const orm = await openOrm({ database: databaseOf(loaded.config), entities, migrations, onMigrated: (names) => (applied = names) });
  await orm.close(true);
  console.log(applied.length ? `Applied ${applied.join(', ')}.` : 'Nothing to migrate: the database is up to date.');
  return 0;
}

/** The schema statements the entities need beyond what the migrations of `dialect` make. */
async function pendingStatements(dialect: Dialect, scratchUrl: string | undefined): Promise<string[]> {
  const database = dialect === 'sqlite' ? ({ dialect, file: ':memory:' } as const) : ({ dialect, url: scratchUrl! } as const);
  const orm = await openOrm({ database, entities });
  try {
    return statementsOf(await orm.schema.getUpdateSchemaSQL({ wrap: false, safe: true }));
  } finally {
    await orm.close(true);
  }
}

async function create(name: string | undefined): Promise<number> {
  if (!name || !/^[a-z][a-z0-9_]*$/.test(name)) {
    console.error('Usage: npm run migrate -- create <name> (lower case letters, digits and _, e.g. add_prompt_labels)');
    return 1;
  }
  const server = process.env.TEST_DATABASE_URL;
  if (!server) {
    console.error('TEST_DATABASE_URL (postgres://… of a server this role may create databases on) is needed to write the PostgreSQL migration.');
    return 1;
  }
  const scratch = new URL(server);
  scratch.pathname = `/gatehouse_migration_scratch_${process.pid}`;
  const sqlite = await pendingStatements('sqlite', undefined);
  const postgres = await pendingStatements('postgresql', scratch.toString()).finally(() => dropDatabase(server, scratch.pathname.slice(1)));
  if (sqlite.length === 0 && postgres.length === 0) {
    console.log('The migrations already make the schema the entities describe: nothing written.');
    return 0;
  }
  const next = String(migrationNames('sqlite').length + 1).padStart(4, '0');
  for (const [dialect, statements] of [['sqlite', sqlite], ['postgresql', postgres]] as const) {
    console.log(`Wrote ${writeMigration(dialect, `${next}_${name}`, statements, name.replace(/_/g, ' '))}`);
  }
  return 0;
}

async function dropDatabase(server: string, name: string): Promise<void> {
  const orm = await MikroORM.init({ driver: PostgresDriver, clientUrl: server, discovery: { warnWhenNoEntities: false } } as Options);
  await orm.em.getConnection().execute(`drop database if exists "${name}" with (force)`);
  await orm.close(true);
}

const [command, name] = process.argv.slice(2);
process.exitCode = command === 'create' ? await create(name) : command === undefined ? await apply() : (console.error(`Unknown command ${command}: use \`npm run migrate\` or \`npm run migrate -- create <name>\`.`), 1);
