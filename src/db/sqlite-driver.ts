import type { Configuration, Dictionary, Transaction } from '@mikro-orm/core';
import { AbstractSqlDriver, BetterSqliteKnexDialect, type AbstractSqlConnection, type CheckDef } from '@mikro-orm/knex';
import { BetterSqliteConnection, BetterSqlitePlatform, BetterSqliteSchemaHelper } from '@mikro-orm/better-sqlite';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a statement waits for another connection's write lock before it fails. */
export const BUSY_WAIT_MS = 10_000;

/**
 * better-sqlite3 runs on the main thread, so SQLite's own busy timeout would block the whole
 * process while another connection (another process on the same file) holds the write lock —
 * and would deadlock two apps sharing a file in one process. Instead the busy timeout is 0 and a
 * statement refused with SQLITE_BUSY is retried after an asynchronous pause, but only where a retry
 * is sound: outside a transaction (nothing was done yet) or at its BEGIN. Transactions begin
 * IMMEDIATE (taking the write lock up front), so a statement inside one is never refused for a lock
 * another connection took after it began.
 */
class Dialect extends BetterSqliteKnexDialect {
  declare config: { onStatement?: (sql: string) => void };

  async _query(connection: Database, obj: { sql: string }): Promise<unknown> {
    reusePreparedStatements(connection);
    const begin = /^\s*begin\s*;?\s*$/i.test(obj.sql);
    if (begin) obj.sql = 'begin immediate';
    this.config.onStatement?.(obj.sql);
    const query = (super._query as (connection: unknown, obj: unknown) => Promise<unknown>).bind(this);
    for (let pause = 1, waited = 0; ; waited += pause, pause = Math.min(pause * 2, 50)) {
      try {
        return await query(connection, obj);
      } catch (error) {
        const busy = (error as { code?: string }).code === 'SQLITE_BUSY';
        if (!busy || (connection.inTransaction && !begin) || waited >= BUSY_WAIT_MS) throw error;
        await sleep(pause);
      }
    }
  }
}

/** The part of a better-sqlite3 connection this file uses. */
interface Database {
  inTransaction: boolean;
  prepare(sql: string): unknown;
}

/** Statement texts kept prepared per connection, and texts remembered as seen once; the oldest go first past these. */
const PREPARED_LIMIT = 200;
const SEEN_LIMIT = 2_000;
const reusing = new WeakSet<Database>();

/**
 * knex's better-sqlite3 dialect prepares every statement it runs, each time (a parse and plan by
 * SQLite, the largest single cost of a small query here). MikroORM writes the values into the
 * text, so most texts are seen once; but some come back on every request (`begin immediate`,
 * `COMMIT;`, `pragma data_version`, queries without values). A text seen a second time is kept
 * prepared on its connection from then on. A prepared statement is only run synchronously (`all`,
 * `run`), never iterated, so one object serves every caller; SQLite prepares it again by itself if
 * the schema changed since.
 */
function reusePreparedStatements(db: Database): void {
  if (reusing.has(db)) return;
  reusing.add(db);
  const prepare = db.prepare.bind(db);
  const prepared = new Map<string, unknown>();
  const seen = new Set<string>();
  db.prepare = (sql: string) => {
    const kept = prepared.get(sql);
    if (kept !== undefined) return kept;
    const statement = prepare(sql);
    if (seen.delete(sql)) keep(prepared, sql, statement, PREPARED_LIMIT);
    else keep(seen, sql, sql, SEEN_LIMIT);
    return statement;
  };
}

function keep<V>(into: Map<string, V> | Set<string>, key: string, value: V, limit: number): void {
  if (into.size >= limit) into.delete(into.keys().next().value!);
  if (into instanceof Map) into.set(key, value);
  else into.add(key);
}

class Connection extends BetterSqliteConnection {
  override createKnex(): void {
    this.client = this.createKnexClient(Dialect as unknown as string);
    this.connected = true;
  }
}

/**
 * MikroORM 6.6's SQLite schema reader splits an enum's `check (… in ('a', 'b', 'c'))` list only
 * before its last item, so every enum with three or more values reads back as two and the schema
 * update rewrites those tables (copy, drop, rename) on every start. Reading every quoted item keeps
 * the stored schema equal to the entities, so a restart changes nothing.
 */
class SchemaHelper extends BetterSqliteSchemaHelper {
  override async getEnumDefinitions(connection: AbstractSqlConnection, _checks: CheckDef[], tableName: string, _schemaName: string, ctx?: Transaction): Promise<Dictionary<string[]>> {
    const table = await connection.execute<{ sql: string }>('select sql from sqlite_master where type = ? and name = ?', ['table', tableName], 'get', ctx);
    const enums: Dictionary<string[]> = {};
    for (const [, column, list] of table.sql.matchAll(/[`"]([^`"]+)[`"] text check \([`"][^`"]+[`"] in \(((?:'(?:[^']|'')*'(?:,\s*)?)*)\)\)/gi)) {
      enums[column] = [...list.matchAll(/'((?:[^']|'')*)'/g)].map((m) => m[1].replace(/''/g, "'"));
    }
    return enums;
  }
}

class Platform extends BetterSqlitePlatform {
  override schemaHelper: SchemaHelper = new SchemaHelper(this);
}

/**
 * `@mikro-orm/better-sqlite`'s driver with the lock waiting and the schema reader above. Pass
 * `driverOptions: { onStatement }` to see every statement sent, transaction control included.
 */
export class SqliteDriver extends AbstractSqlDriver<Connection, Platform> {
  constructor(config: Configuration) {
    super(config, new Platform(), Connection, ['knex', 'better-sqlite3']);
  }
}
