/**
 * A thread's messages and runs, and a workspace's threads, are read in order through one index
 * each (migration 0010_thread_order_indexes): the list pages, with or without a cursor, neither
 * sort nor walk another index. SQLite's plans (PostgreSQL chooses by its statistics).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { executeSql } from '../../../src/db/sql.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { onPostgres } from '../../helpers/database.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const plan = async (sql: string) =>
  (await executeSql<{ detail: string }[]>(t.app.runtime.fork(), `explain query plan ${sql}`, ['x', 1])).map((row) => row.detail).join(' | ');

it.skipIf(onPostgres)('reads a thread’s messages and runs, and a workspace’s threads, in order from one index', async () => {
  for (const [table, parent] of [['thread_messages', 'thread_id'], ['runs', 'thread_id'], ['threads', 'workspace_id']]) {
    const index = `${table}_${parent}_ordinal_index`;
    for (const order of ['asc', 'desc']) {
      expect(await plan(`select * from ${table} where ${parent} = ? and ordinal >= ? order by ordinal ${order} limit 21`)).toBe(`SEARCH ${table} USING INDEX ${index} (${parent}=? AND ordinal>?)`);
      expect(await plan(`select * from ${table} where ${parent} = ? and ordinal < ? order by ordinal ${order} limit 21`)).toBe(`SEARCH ${table} USING INDEX ${index} (${parent}=? AND ordinal<?)`);
    }
  }
});
