import { MikroORM, type EntitySchema, type Options } from '@mikro-orm/core';
import { SqliteDriver } from './sqlite-driver.js';

/**
 * better-sqlite3 (synchronous, in the main thread) rather than `@mikro-orm/sqlite`'s sqlite3 (each
 * statement a round trip through the libuv pool): measured in `npm run bench`, a run's admission
 * overhead fell from ~200 ms to a few ms at concurrency 4 because the single connection is no
 * longer held across thread-pool hops.
 */
export type Orm = MikroORM<SqliteDriver>;

export interface OrmOptions {
  /** SQLite file path, or `:memory:`. */
  file: string;
  entities: EntitySchema<any, any>[];
  /** Called with every SQL statement, `begin`/`commit` included (tests count statements and transactions). */
  onQuery?: (sql: string) => void;
}

/**
 * Opens the database and brings its schema up to date. The schema is derived from the entities and
 * upgraded additively on every start, so `npm start` works on a fresh clone and after upgrades.
 */
export async function openOrm(options: OrmOptions): Promise<Orm> {
  const config: Options<SqliteDriver> = {
    driver: SqliteDriver,
    dbName: options.file,
    entities: options.entities,
    // Each request and background job forks its own EntityManager; the global one must not be used.
    allowGlobalContext: false,
    forceUtcTimezone: true,
    discovery: { warnWhenNoEntities: false },
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
    driverOptions: { onStatement: options.onQuery },
  };
  const orm = await MikroORM.init<SqliteDriver>(config);
  await orm.schema.updateSchema({ safe: true });
  return orm;
}
