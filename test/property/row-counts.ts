import { executeSql } from '../../src/db/sql.js';
import { requestLogWriter } from '../../src/modules/request-log/request-log.writer.js';
import { runExecutor } from '../../src/modules/runs/executor.js';
import type { TestApp } from '../helpers/app.js';


/** Row counts of `tables`, after background work (runs, after-response tasks, the request log's batches) has settled. */
export async function rowCounts(t: TestApp, tables: string[]): Promise<Record<string, number>> {
  await runExecutor(t.app.runtime).whenIdle();
  await new Promise((resolve) => setImmediate(resolve));
  await requestLogWriter(t.app.runtime).flush();
  const sql = tables.map((name) => `select '${name}' as name, count(*) as n from "${name}"`).join(' union all ');
  const rows = await executeSql<Array<{ name: string; n: number }>>(t.app.runtime.orm.em.fork(), sql, []);
  return Object.fromEntries(rows.map((row) => [row.name, Number(row.n)]));
}
