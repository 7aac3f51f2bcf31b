import type { EntityManager } from '@mikro-orm/core';
import type { Orm } from '../../src/db/orm.js';

/**
 * A transaction on `orm` that has run `work` and stays open until `release` is called; it then
 * commits, or rolls back (rejecting with 'rolled back') when `end` is 'rollback'.
 */
export async function heldTransaction(orm: Orm, work: (tx: EntityManager) => Promise<unknown>, end: 'commit' | 'rollback' = 'commit') {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let began!: () => void;
  const inside = new Promise<void>((resolve) => (began = resolve));
  const transaction = orm.em.fork().transactional(async (tx) => {
    await work(tx);
    began();
    await held;
    if (end === 'rollback') throw new Error('rolled back');
  });
  await inside;
  return { transaction, release };
}
