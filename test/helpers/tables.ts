import { dialectOf, executeSql } from '../../src/db/sql.js';
import type { TestApp } from './app.js';

/** The app's own tables (not SQLite's or the migrator's), on either database: what a test counts or reads whole. */
export async function tableNames(t: TestApp): Promise<string[]> {
  const em = t.app.runtime.orm.em.fork();
  const sql =
    dialectOf(em) === 'sqlite'
      ? "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'mikro_orm_%'"
      : "select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name not like 'mikro_orm_%'";
  const rows = await executeSql<Array<{ name: string }>>(em, sql, []);
  return rows.map((row) => row.name);
}
