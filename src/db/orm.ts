import { MikroORM, type Options } from '@mikro-orm/sqlite';
import type { EntitySchema } from '@mikro-orm/core';

export interface OrmOptions {
  /** SQLite file path, or `:memory:`. */
  file: string;
  entities: EntitySchema<any, any>[];
  /** Called with every SQL statement (tests count statements to prove batching). */
  onQuery?: (sql: string) => void;
}

/**
 * Opens the database and brings its schema up to date. The schema is derived from the entities and
 * upgraded additively on every start, so `npm start` works on a fresh clone and after upgrades.
 */
export async function openOrm(options: OrmOptions): Promise<MikroORM> {
  const config: Options = {
    dbName: options.file,
    entities: options.entities,
    // Each request and background job forks its own EntityManager; the global one must not be used.
    allowGlobalContext: false,
    forceUtcTimezone: true,
    discovery: { warnWhenNoEntities: false },
    pool: {
      min: 1,
      max: 1,
      // WAL lets readers proceed during a write; the busy timeout lets two processes share the file.
      afterCreate: (connection: any, done: (err: Error | null, connection: unknown) => void) => {
        connection.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL;', (err: Error | null) =>
          done(err, connection),
        );
      },
    },
    onQuery: (sql: string) => {
      options.onQuery?.(sql);
      return sql;
    },
  };
  const orm = await MikroORM.init(config);
  await orm.schema.updateSchema({ safe: true });
  return orm;
}
