import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { RawQueryFragment, type EntityManager } from '@mikro-orm/core';
import { afterEach, expect, it, vi } from 'vitest';
import { databaseOf, configFrom } from '../../../src/config.js';
import { openOrm, type Orm } from '../../../src/db/orm.js';
import { executeSql } from '../../../src/db/sql.js';
import { domainModules } from '../../../src/modules/index.js';
import { OrganisationSchema, type Organisation } from '../../../src/modules/tenancy/organisation.entity.js';
import { TEST_SECRET_KEY, testDatabase } from '../../helpers/database.js';

// src/db/entity-manager.ts: flushes and transactions without MikroORM's AsyncLocalStorage (which
// turns on Node's promise hooks for the whole process), with MikroORM's transaction semantics.
// On SQLite, and on PostgreSQL with TEST_DATABASE_URL.

afterEach(() => vi.restoreAllMocks());

async function open(): Promise<{ orm: Orm; close(): Promise<void> }> {
  const database = await testDatabase('sqlite::memory:');
  const orm = await openOrm({ database: databaseOf(configFrom({ DATABASE_URL: database.url, GATEWAY_SECRET_KEY: TEST_SECRET_KEY })), entities: domainModules.flatMap((m) => m.entities) });
  return {
    orm,
    async close() {
      await orm.close(true);
      await database.release();
    },
  };
}

const organisation = (em: EntityManager, name: string) => em.create(OrganisationSchema, { id: randomUUID(), name, createdAt: new Date(), updatedAt: new Date() });
const names = async (em: EntityManager) =>
  (await executeSql<{ name: string }[]>(em, 'select name from organisations order by name', [])).map((row) => row.name);

it('flushes, transactions (nested too) and findAndCount never run an AsyncLocalStorage', async () => {
  const { orm, close } = await open();
  // MikroORM's own findAndCount is taken while a raw fragment waits in its process-wide cache; none
  // should: every one the application builds is consumed by the query it was built for.
  expect(RawQueryFragment.checkCacheSize(), 'a raw fragment leaked from an earlier query').toBe(0);
  const run = vi.spyOn(AsyncLocalStorage.prototype, 'run');
  const enterWith = vi.spyOn(AsyncLocalStorage.prototype, 'enterWith');
  try {
    const em = orm.em.fork();
    em.persist(organisation(em, 'a'));
    await em.flush();
    await em.transactional(async (tx) => {
      tx.persist(organisation(tx, 'b'));
      await tx.transactional(async (inner) => {
        inner.persist(organisation(inner, 'c'));
      });
    });
    const [rows, total] = await orm.em.fork().findAndCount(OrganisationSchema, {}, { orderBy: { name: 'asc' } });
    expect(rows.map((o) => o.name)).toEqual(['a', 'b', 'c']);
    expect(total).toBe(3);
    expect(run).not.toHaveBeenCalled();
    expect(enterWith).not.toHaveBeenCalled();
  } finally {
    await close();
  }
});

it('a transaction commits what its callback persisted and hands its entities to the manager it was begun on', async () => {
  const { orm, close } = await open();
  try {
    const em = orm.em.fork();
    const created = await em.transactional(async (tx) => {
      const o = organisation(tx, 'kept');
      tx.persist(o);
      return o;
    });
    expect(await names(orm.em.fork())).toEqual(['kept']);
    expect(em.getUnitOfWork().getById(OrganisationSchema.meta.className, created.id)).toBe(created);
    // Nothing to write: no flush, the same result.
    expect(await em.transactional(async () => 42)).toBe(42);
  } finally {
    await close();
  }
});

it('a throw rolls the transaction back and leaves the manager it was begun on as it was', async () => {
  const { orm, close } = await open();
  try {
    const em = orm.em.fork();
    await expect(
      em.transactional(async (tx) => {
        tx.persist(organisation(tx, 'lost'));
        await tx.flush();
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await names(orm.em.fork())).toEqual([]);
    expect([...em.getUnitOfWork().getIdentityMap()]).toEqual([]);
  } finally {
    await close();
  }
});

it('a nested transaction that throws rolls back to its savepoint; the outer one commits', async () => {
  const { orm, close } = await open();
  try {
    await orm.em.fork().transactional(async (tx) => {
      tx.persist(organisation(tx, 'outer'));
      await tx.flush();
      await expect(
        tx.transactional(async (inner) => {
          inner.persist(organisation(inner, 'inner'));
          await inner.flush();
          throw new Error('inner');
        }),
      ).rejects.toThrow('inner');
    });
    expect(await names(orm.em.fork())).toEqual(['outer']);
  } finally {
    await close();
  }
});

it("writes the begun-on manager's changed entities in the transaction, and unsets there what the transaction removed", async () => {
  const { orm, close } = await open();
  try {
    const seed = orm.em.fork();
    seed.persist([organisation(seed, 'renamed'), organisation(seed, 'removed')]);
    await seed.flush();
    const em = orm.em.fork();
    const [renamed, removed] = await em.find(OrganisationSchema, {}, { orderBy: { name: 'desc' } });
    renamed.name = 'new name';
    await em.transactional(async (tx) => {
      tx.remove(tx.getReference(OrganisationSchema, removed.id));
    });
    expect(await names(orm.em.fork())).toEqual(['new name']);
    const managed = em.getUnitOfWork().getById<Organisation>(OrganisationSchema.meta.className, removed.id);
    expect(managed).toBeUndefined();
  } finally {
    await close();
  }
});

it('flushes asked for during a flush of the same manager run after it, one at a time', async () => {
  const { orm, close } = await open();
  try {
    const em = orm.em.fork();
    em.persist(organisation(em, 'one'));
    const first = em.flush();
    em.persist(organisation(em, 'two'));
    await Promise.all([first, em.flush()]);
    expect(await names(orm.em.fork())).toEqual(['one', 'two']);
  } finally {
    await close();
  }
});
