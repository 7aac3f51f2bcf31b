import { defineEntity, type EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/knex';
import { afterEach, expect, it, vi } from 'vitest';
import { openOrm, type Orm } from '../../../src/db/orm.js';
import { executeSql } from '../../../src/db/sql.js';
import { heldTransaction } from '../../helpers/held-transaction.js';

// Transactions on SQLite run on the connection itself (src/db/sqlite-transaction.ts), not through
// knex's transactions: these tests hold them to what knex's gave. Waiting for another
// connection's write lock: test/unit/db/sqlite-bound.test.ts.

const Item = defineEntity({
  name: 'Item',
  tableName: 'items',
  properties: (p) => ({ id: p.integer().primary().autoincrement(), name: p.string() }),
});

afterEach(() => vi.restoreAllMocks());

async function open(file: string, statements: string[] = []): Promise<Orm> {
  const orm = await openOrm({ database: { dialect: 'sqlite', file }, entities: [Item], onQuery: (sql) => statements.push(sql) });
  await executeSql(orm.em.fork(), 'create table if not exists items (id integer primary key autoincrement, name text not null)', [], 'run');
  return orm;
}

const names = async (em: EntityManager) => (await executeSql<{ name: string }[]>(em, 'select name from items order by id', [])).map((row) => row.name);
const insert = (em: EntityManager, name: string) => executeSql(em, 'insert into items (name) values (?)', [name], 'run');
const turn = () => new Promise((resolve) => setTimeout(resolve, 5));
const knexOf = (orm: Orm) => (orm.em.fork() as SqlEntityManager).getKnex();

it('is all or nothing: a throw after awaits rolls back every statement, whichever way it ran', async () => {
  const orm = await open(':memory:');
  const transaction = vi.spyOn(knexOf(orm), 'transaction');
  try {
    await expect(
      orm.em.fork().transactional(async (tx) => {
        await insert(tx, 'raw');
        await turn();
        tx.persist(tx.create(Item, { name: 'flushed' }));
        await tx.flush();
        await turn();
        // A query builder, MikroORM's raw execute, a list (written into the text, knex's path) and a
        // knex query given the transaction: all inside it.
        await (tx as SqlEntityManager).createQueryBuilder(Item).insert({ name: 'built' });
        await tx.getConnection().execute('insert into items (name) values (?)', ['executed'], 'run', tx.getTransactionContext());
        await executeSql(tx, "insert into items (name) select 'listed' where 'a' in (?)", [['a', 'b']], 'run');
        await knexOf(orm)('items').insert({ name: 'knex' }).transacting(tx.getTransactionContext()!);
        expect(await names(tx)).toEqual(['raw', 'flushed', 'built', 'executed', 'listed', 'knex']);
        await turn();
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await names(orm.em.fork())).toEqual([]);

    await orm.em.fork().transactional(async (tx) => {
      tx.persist(tx.create(Item, { name: 'kept' }));
      await turn();
      await insert(tx, 'also kept');
    });
    // The persisted entity is flushed when the callback returns, after the raw insert.
    expect(await names(orm.em.fork())).toEqual(['also kept', 'kept']);
    // Neither took a knex transaction.
    expect(transaction).not.toHaveBeenCalled();
  } finally {
    await orm.close(true);
  }
});

it("keeps another request's statements out of an open transaction: they wait for its end", async () => {
  const orm = await open(':memory:');
  try {
    const { transaction, release } = await heldTransaction(orm, (tx) => insert(tx, 'inside'), 'rollback');
    const finished: string[] = [];
    const seen: string[] = [];
    const others = [
      insert(orm.em.fork(), 'raw').then(() => finished.push('raw')),
      names(orm.em.fork()).then((rows) => finished.push('read', ...rows.map((name) => (seen.push(name), 'seen')))),
      orm.em.fork().find(Item, {}).then((items) => finished.push('find', ...items.map(({ name }) => (seen.push(name), 'seen')))),
      (async () => {
        const em = orm.em.fork();
        em.persist(em.create(Item, { name: 'flushed' }));
        await em.flush();
        finished.push('flush');
      })(),
      orm.em.fork().transactional((tx) => insert(tx, 'other transaction')).then(() => finished.push('transaction')),
    ];
    await turn();
    await turn();
    expect(finished).toEqual([]);
    release();
    await expect(transaction).rejects.toThrow('rolled back');
    await Promise.all(others);
    // All ran, none saw 'inside', and the rollback took none of theirs.
    expect(finished).toEqual(expect.arrayContaining(['raw', 'read', 'find', 'flush', 'transaction']));
    expect(seen).not.toContain('inside');
    expect(seen).toContain('raw');
    expect((await names(orm.em.fork())).sort()).toEqual(['flushed', 'other transaction', 'raw']);
  } finally {
    await orm.close(true);
  }
});

it('nests as savepoints: an inner rollback keeps the outer work; inner transactions run one after the other', async () => {
  const statements: string[] = [];
  const orm = await open(':memory:', statements);
  try {
    statements.length = 0;
    await orm.em.fork().transactional(async (tx) => {
      await insert(tx, 'outer');
      await expect(
        tx.transactional(async (inner) => {
          await insert(inner, 'inner, rolled back');
          await turn();
          throw new Error('inner');
        }),
      ).rejects.toThrow('inner');
      const order: string[] = [];
      await Promise.all(
        ['first', 'second'].map((name) =>
          tx.transactional(async (inner) => {
            order.push(`${name} begins`);
            await insert(inner, name);
            await turn();
            order.push(`${name} ends`);
          }),
        ),
      );
      expect(order).toEqual(['first begins', 'first ends', 'second begins', 'second ends']);
      await tx.transactional((inner) => inner.transactional((innermost) => insert(innermost, 'innermost')));
    });
    expect(await names(orm.em.fork())).toEqual(['outer', 'first', 'second', 'innermost']);
    expect(statements.filter((sql) => /^(begin|commit|rollback|savepoint|release)/i.test(sql))).toEqual([
      'begin immediate',
      'savepoint trx1',
      'rollback to savepoint trx1',
      'release savepoint trx1',
      'savepoint trx1',
      'release savepoint trx1',
      'savepoint trx1',
      'release savepoint trx1',
      'savepoint trx1',
      'savepoint trx2',
      'release savepoint trx2',
      'release savepoint trx1',
      'commit',
    ]);

    // An outer rollback takes the committed inner work with it.
    await expect(
      orm.em.fork().transactional(async (tx) => {
        await tx.transactional((inner) => insert(inner, 'gone'));
        throw new Error('outer');
      }),
    ).rejects.toThrow('outer');
    expect(await names(orm.em.fork())).toEqual(['outer', 'first', 'second', 'innermost']);
  } finally {
    await orm.close(true);
  }
});

it('a transaction that has ended runs nothing more: a statement given it fails instead of running outside it', async () => {
  const orm = await open(':memory:');
  try {
    let escaped!: EntityManager;
    await orm.em.fork().transactional(async (tx) => {
      escaped = tx;
    });
    await expect(insert(escaped, 'late')).rejects.toThrow(/already complete/);
    await expect(executeSql(escaped, "insert into items (name) select 'late' where 'a' in (?)", [['a']], 'run')).rejects.toThrow(/already complete/);
    expect(await names(orm.em.fork())).toEqual([]);
  } finally {
    await orm.close(true);
  }
});

it('a commit SQLite refuses (a deferred foreign key) rolls everything back and frees the connection', async () => {
  const orm = await open(':memory:');
  try {
    await executeSql(orm.em.fork(), 'create table parents (id integer primary key)', [], 'run');
    await executeSql(orm.em.fork(), 'create table children (parent integer references parents (id) deferrable initially deferred)', [], 'run');
    await expect(
      orm.em.fork().transactional(async (tx) => {
        await insert(tx, 'with the orphan');
        await executeSql(tx, 'insert into children (parent) values (?)', [42], 'run');
      }),
    ).rejects.toThrow(/FOREIGN KEY constraint failed/);
    expect(await names(orm.em.fork())).toEqual([]);
    await orm.em.fork().transactional((tx) => insert(tx, 'next'));
    expect(await names(orm.em.fork())).toEqual(['next']);
  } finally {
    await orm.close(true);
  }
});
