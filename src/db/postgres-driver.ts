import type { Configuration } from '@mikro-orm/core';
import { AbstractSqlDriver, PostgreSqlKnexDialect } from '@mikro-orm/knex';
import { PostgreSqlConnection, PostgreSqlPlatform } from '@mikro-orm/postgresql';

/** Sees every statement sent, `begin`/`commit` included, like the SQLite driver's dialect. */
class Dialect extends PostgreSqlKnexDialect {
  declare config: { onStatement?: (sql: string) => void };

  _query(connection: unknown, obj: { sql: string }): Promise<unknown> {
    this.config.onStatement?.(obj.sql);
    return (super._query as (connection: unknown, obj: unknown) => Promise<unknown>).call(this, connection, obj);
  }
}

/** pg's type ids (`select oid, typname from pg_type`). */
const INT8 = 20;
const NUMERIC = 1700;

class Connection extends PostgreSqlConnection {
  override createKnex(): void {
    this.client = this.createKnexClient(Dialect as unknown as string);
    (this.client.client as { ormConfig?: unknown }).ormConfig = this.config;
    this.connected = true;
  }

  /**
   * `bigint` columns, `count(*)` and `sum(…)` come back from pg as strings (they can exceed 2^53).
   * Every integer this application stores is a JavaScript number already (counters, ordinals,
   * milliseconds), so raw statements read numbers on PostgreSQL as they do on SQLite.
   */
  override getConnectionOptions() {
    const options = super.getConnectionOptions();
    const types = options.types as unknown as { setTypeParser(oid: number, parse: (text: string) => unknown): void };
    types.setTypeParser(INT8, Number);
    types.setTypeParser(NUMERIC, Number);
    return options;
  }
}

/** `@mikro-orm/postgresql`'s driver with the statement hook and the number parsing above. */
export class PostgresDriver extends AbstractSqlDriver<Connection, PostgreSqlPlatform> {
  constructor(config: Configuration) {
    super(config, new PostgreSqlPlatform(), Connection, ['knex', 'pg']);
  }
}
