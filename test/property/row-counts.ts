import { dialectOf, executeSql } from '../../src/db/sql.js';
import { requestLogWriter } from '../../src/modules/request-log/request-log.writer.js';
import { runExecutor } from '../../src/modules/runs/executor.js';
import type { TestApp } from '../helpers/app.js';

/** The app's own tables (not SQLite's or the migrator's): those whose row counts an error must leave alone. */
export async function tableNames(t: TestApp): Promise<string[]> {
  const em = t.app.runtime.orm.em.fork();
  const sql =
    dialectOf(em) === 'sqlite'
      ? "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'mikro_orm_%'"
      : "select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name not like 'mikro_orm_%'";
  const rows = await executeSql<Array<{ name: string }>>(em, sql, []);
  return rows.map((row) => row.name);
}

/** Row counts of `tables`, after background work (runs, after-response tasks, the request log's batches) has settled. */
export async function rowCounts(t: TestApp, tables: string[]): Promise<Record<string, number>> {
  await runExecutor(t.app.runtime).whenIdle();
  await new Promise((resolve) => setImmediate(resolve));
  await requestLogWriter(t.app.runtime).flush();
  const sql = tables.map((name) => `select '${name}' as name, count(*) as n from "${name}"`).join(' union all ');
  const rows = await executeSql<Array<{ name: string; n: number }>>(t.app.runtime.orm.em.fork(), sql, []);
  return Object.fromEntries(rows.map((row) => [row.name, Number(row.n)]));
}
