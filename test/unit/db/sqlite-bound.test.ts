import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { openOrm, type Orm } from '../../../src/db/orm.js';
import { boundSql, executeSql } from '../../../src/db/sql.js';
import { heldTransaction } from '../../helpers/held-transaction.js';

// better-sqlite3 ships no typings: only the method spied on is described.
const Database = createRequire(import.meta.url)('better-sqlite3') as { prototype: { prepare(sql: string): unknown } };

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bound-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

async function open(file: string, statements: string[] = []): Promise<Orm> {
  const orm = await openOrm({ database: { dialect: 'sqlite', file }, entities: [], onQuery: (sql) => statements.push(sql) });
  await executeSql(orm.em.fork(), 'create table if not exists t (id integer primary key, v text, n real, at integer, flag integer, doc text)', [], 'run');
  return orm;
}

const knexOf = (orm: Orm) => (orm.em.getConnection() as unknown as { getKnex(): { raw(...args: unknown[]): unknown } }).getKnex();

it('raw SQL binds values as MikroORM stores them and runs prepared once, on the connection itself', async () => {
  const statements: string[] = [];
  // Spied before the connection opens: it keeps the prepare it found then (reusePreparedStatements).
  const prepare = vi.spyOn(Database.prototype, 'prepare');
  const orm = await open(':memory:', statements);
  try {
    const raw = vi.spyOn(knexOf(orm), 'raw');
    statements.length = 0;
    const insert = 'insert into t (v, n, at, flag, doc) values (?, ?, ?, ?, ?)';
    const at = new Date('2026-11-24T04:30:00.000Z');
    for (let i = 0; i < 4; i++) {
      const result = await executeSql(orm.em.fork(), insert, [`v${i}`, 1.5, at, i % 2 === 0, { i }], 'run');
      expect(result).toMatchObject({ affectedRows: 1, insertId: i + 1 });
    }
    // MikroORM's own raw `execute` is the same path.
    await orm.em.fork().getConnection().execute(insert, [undefined, null, null, false, null], 'run');
    const rows = await executeSql(orm.em.fork(), 'select v, n, at, flag, doc from t where id <= ? order by id', [2]);
    expect(rows).toEqual([
      { v: 'v0', n: 1.5, at: at.getTime(), flag: 1, doc: '{"i":0}' },
      { v: 'v1', n: 1.5, at: at.getTime(), flag: 0, doc: '{"i":1}' },
    ]);
    expect(await executeSql(orm.em.fork(), 'select v, flag from t where id = ?', [5], 'get')).toEqual({ v: null, flag: 0 });
    expect(await executeSql(orm.em.fork(), 'select v from t where id = ?', [99], 'get')).toBeUndefined();
    // `returning` on a write: its rows.
    expect(await boundSql(orm.em.fork(), 'update t set n = n + ? where id = ? returning id, n', [1, 1])).toEqual([{ id: 1, n: 2.5 }]);

    // Every statement seen by the hook once; the text with values repeated is prepared at most twice
    // (seen once, then kept); knex's query path was not taken.
    expect(statements.filter((sql) => sql === insert)).toHaveLength(5);
    expect(prepare.mock.calls.filter(([sql]) => sql === insert).length).toBeLessThanOrEqual(2);
    expect(raw).not.toHaveBeenCalled();
    // A failure names the statement (not its values), as knex's do.
    await expect(executeSql(orm.em.fork(), 'insert into t (id, v) values (?, ?)', [1, 'secret'], 'run')).rejects.toThrow(
      /^insert into t \(id, v\) values \(\?, \?\) - UNIQUE constraint failed: t\.id$/,
    );
    // A list, which SQLite cannot bind, is written into the text as before.
    expect(await executeSql(orm.em.fork(), 'select v from t where v in (?) order by v', [['v1', 'v3']])).toEqual([{ v: 'v1' }, { v: 'v3' }]);
    // So are more values than SQLite binds in one statement (32766).
    const ids = Array.from({ length: 40_000 }, (_, i) => i + 1);
    expect(await executeSql(orm.em.fork(), `select count(*) as n from t where id in (${ids.map(() => '?').join(', ')})`, ids, 'get')).toEqual({ n: 5 });
  } finally {
    await orm.close(true);
  }
});

it('inside a transaction runs in it; outside, waits for the open transaction instead of joining it', async () => {
  const orm = await open(':memory:');
  try {
    const { transaction, release } = await heldTransaction(orm, (tx) => executeSql(tx, "insert into t (v) values ('in')", [], 'run'), 'rollback');
    const write = executeSql(orm.em.fork(), "insert into t (v) values ('out')", [], 'run');
    const read = boundSql<{ v: string }[]>(orm.em.fork(), 'select v from t order by id', []);
    release();
    await expect(transaction).rejects.toThrow('rolled back');
    await write;
    // 'in' went with the rollback; the others ran after it, in their order: had they run on the
    // connection while the transaction was open, the read would have seen 'in' and the rollback
    // taken 'out' with it.
    expect(await read).toEqual([{ v: 'out' }]);
    expect(await executeSql(orm.em.fork(), 'select v from t', [])).toEqual([{ v: 'out' }]);
  } finally {
    await orm.close(true);
  }
});

it('a statement with large values waits a turn of the event loop first, inside a transaction too; a small one does not', async () => {
  const orm = await open(':memory:');
  try {
    const large = 'x'.repeat(256_000);
    const order: string[] = [];
    await orm.em.fork().transactional(async (tx) => {
      await executeSql(tx, 'insert into t (v) values (?)', [large], 'run');
      order.push('first');
      setImmediate(() => order.push('immediate'));
      await executeSql(tx, 'insert into t (v, doc) values (?, ?)', ['second', large], 'run');
      order.push('second');
    });
    // Run back to back, both would have held the same turn of the event loop.
    expect(order).toEqual(['first', 'immediate', 'second']);
    order.length = 0;
    setImmediate(() => order.push('immediate'));
    await executeSql(orm.em.fork(), 'insert into t (v) values (?)', ['x'.repeat(1_000)], 'run');
    order.push('small');
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['small', 'immediate']);
    expect(await executeSql(orm.em.fork(), 'select length(v) as v, length(doc) as doc from t order by id', [])).toEqual([
      { v: 256_000, doc: null },
      { v: 6, doc: 256_000 },
      { v: 1_000, doc: null },
    ]);
  } finally {
    await orm.close(true);
  }
});

it("waits for another connection's write lock without blocking, a statement or a transaction's begin, and counts each once", async () => {
  const file = join(dir, 'shared.sqlite');
  const statements: string[] = [];
  const first = await open(file);
  const second = await open(file, statements);
  const writes = {
    statement: () => executeSql(second.em.fork(), 'insert into t (v) values (?)', ['statement'], 'run'),
    transaction: () => second.em.fork().transactional((tx) => executeSql(tx, 'insert into t (v) values (?)', ['transaction'], 'run')),
  };
  try {
    for (const [name, write] of Object.entries(writes)) {
      const { transaction, release } = await heldTransaction(first, (tx) => executeSql(tx, 'insert into t (v) values (?)', [`held before ${name}`], 'run'));
      statements.length = 0;
      let done = false;
      const waiting = write().then(() => (done = true));
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(done).toBe(false);
      release();
      await transaction;
      await waiting;
      expect(statements.filter((sql) => sql.startsWith('insert into t'))).toHaveLength(1);
      expect(statements.filter((sql) => /^begin/i.test(sql))).toHaveLength(name === 'transaction' ? 1 : 0);
    }
    const rows = await executeSql<{ v: string }[]>(second.em.fork(), 'select v from t order by id', []);
    expect(rows.map(({ v }) => v)).toEqual(['held before statement', 'statement', 'held before transaction', 'transaction']);
  } finally {
    await second.close(true);
    await first.close(true);
  }
});
