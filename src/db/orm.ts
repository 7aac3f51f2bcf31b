import { MikroORM, type EntitySchema, type MigrationObject, type Options } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import type { Database } from '../config.js';
import { EntityManager } from './entity-manager.js';
import { migrate, type MigrateMode } from './migrate.js';
import { postgresMigrations } from './migrations/postgresql/index.js';
import { sqliteMigrations } from './migrations/sqlite/index.js';
import { PostgresDriver } from './postgres-driver.js';
import { SqliteDriver } from './sqlite-driver.js';

/**
 * SQLite through better-sqlite3 (synchronous, in the main thread) rather than `@mikro-orm/sqlite`'s
 * sqlite3 (each statement a round trip through the libuv pool): measured in `npm run bench`, a
 * run's admission overhead fell from ~200 ms to a few ms at concurrency 4 because the single
 * connection is no longer held across thread-pool hops. PostgreSQL through pg, with a pool.
 */
export type Orm = MikroORM<SqliteDriver | PostgresDriver>;

export interface OrmOptions {
  database: Database;
  entities: EntitySchema<any, any>[];
  /** Data migrations of the domain modules, run after the schema migrations (src/db/migrate.ts). */
  migrations?: MigrationObject[];
  /** `auto` (default): apply pending migrations; `off`: refuse to open a database they are pending on. */
  migrate?: MigrateMode;
  /** Called with the names of the migrations applied on opening (none: an empty list). */
  onMigrated?: (names: string[]) => void;
  /** Called with every SQL statement, `begin`/`commit` included (tests count statements and transactions). */
  onQuery?: (sql: string) => void;
}

const common = {
  // Each request and background job forks its own EntityManager; the global one must not be used.
  allowGlobalContext: false,
  // Flushes and transactions without MikroORM's AsyncLocalStorage (see there).
  entityManager: EntityManager,
  forceUtcTimezone: true,
  discovery: { warnWhenNoEntities: false },
  extensions: [Migrator],
} satisfies Options;

function sqliteOptions(file: string): Options<SqliteDriver> {
  return {
    driver: SqliteDriver,
    dbName: file,
    pool: {
      min: 1,
      max: 1,
      // WAL lets readers proceed during a write. Waiting for another process's write lock is done
      // by the driver without blocking the thread (sqlite-driver.ts), so SQLite's busy timeout is 0.
      afterCreate: (connection: { exec(sql: string): unknown }, done: (err: Error | null, connection: unknown) => void) => {
        try {
          connection.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 0; PRAGMA synchronous = NORMAL;');
          done(null, connection);
        } catch (error) {
          done(error as Error, connection);
        }
      },
    },
  };
}

function postgresOptions(url: string): Options<PostgresDriver> {
  // No idle connections kept: an idle app holds none of the server's connection slots.
  return { driver: PostgresDriver, clientUrl: url, pool: { min: 0, max: 10 } };
}

/** Opens the database and brings its schema up to date with the versioned migrations (src/db/migrate.ts). */
export async function openOrm(options: OrmOptions): Promise<Orm> {
  const { database } = options;
  const dialect = database.dialect === 'sqlite' ? sqliteOptions(database.file) : postgresOptions(database.url);
  const orm = (await MikroORM.init({
    ...common,
    ...dialect,
    entities: options.entities,
    driverOptions: { onStatement: options.onQuery },
    migrations: migrationOptions(database, options.migrations ?? []),
  } as Options)) as Orm;
  try {
    const applied = await migrate(orm, options.migrate ?? 'auto');
    options.onMigrated?.(applied);
  } catch (error) {
    await orm.close(true);
    throw error;
  }
  return orm;
}

function migrationOptions(database: Database, dataMigrations: MigrationObject[]): Options['migrations'] {
  const schema = database.dialect === 'sqlite' ? sqliteMigrations : postgresMigrations;
  return {
    migrationsList: [...schema, ...dataMigrations],
    tableName: 'mikro_orm_migrations',
    // One transaction for the whole batch (src/db/migrate.ts takes it); a migration's foreign keys
    // stay checked (turning them off on PostgreSQL needs a superuser); no snapshot file is written.
    transactional: true,
    allOrNothing: true,
    disableForeignKeys: false,
    snapshot: false,
    silent: true,
  };
}
