import { createRequire } from 'node:module';
import { afterEach, expect, it, vi } from 'vitest';
import { openOrm } from '../../../src/db/orm.js';
import { executeSql } from '../../../src/db/sql.js';
import { domainModules } from '../../../src/modules/index.js';

// better-sqlite3 ships no typings: only the method spied on is described.
const Database = createRequire(import.meta.url)('better-sqlite3') as { prototype: { prepare(sql: string): unknown } };

afterEach(() => vi.restoreAllMocks());

it('a statement text seen twice stays prepared on its connection (results as before, schema changes included)', async () => {
  const prepare = vi.spyOn(Database.prototype, 'prepare');
  const orm = await openOrm({ database: { dialect: 'sqlite', file: ':memory:' }, entities: domainModules.flatMap((m) => m.entities) });
  const preparedTimes = (sql: string) => prepare.mock.calls.filter(([text]) => text === sql).length;
  try {
    const connection = orm.em.fork().getConnection();
    await connection.execute('create table t (id integer primary key, v text)');
    for (const v of ['a', 'b', 'c']) await connection.execute('insert into t (v) values (?)', [v], 'run');
    const count = 'select count(*) as n from t';
    for (let i = 0; i < 5; i++) expect(await connection.execute(count, [], 'get')).toEqual({ n: 3 });
    // Seen once (prepared, not kept), then kept: five runs, two preparations.
    expect(preparedTimes(count)).toBe(2);
    // A column added after the statement was kept: SQLite prepares it again by itself.
    const read = 'select * from t where id = 1';
    for (let i = 0; i < 2; i++) expect(await connection.execute(read, [], 'get')).toEqual({ id: 1, v: 'a' });
    await connection.execute("alter table t add column w text default 'x'");
    expect(await connection.execute(read, [], 'get')).toEqual({ id: 1, v: 'a', w: 'x' });
    expect(preparedTimes(read)).toBe(2);
    // A long text (a multi-row insert, a long list) is neither kept nor remembered.
    const long = `select count(*) as n from t where v in (${Array.from({ length: 2_000 }, (_, i) => `'v${i}'`).join(', ')})`;
    for (let i = 0; i < 3; i++) expect(await connection.execute(long, [], 'get')).toEqual({ n: 0 });
    expect(preparedTimes(long)).toBe(3);
    // Transactions' control statements come back every time: kept too.
    for (let i = 0; i < 3; i++) await orm.em.fork().transactional((tx) => executeSql(tx, "insert into t (v) values ('d')", [], 'run'));
    expect(preparedTimes('begin immediate')).toBeLessThanOrEqual(2);
  } finally {
    await orm.close(true);
  }
});
