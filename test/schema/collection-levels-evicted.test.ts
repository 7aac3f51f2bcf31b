import { afterAll, beforeAll, expect, it } from 'vitest';
import { executeSql } from '../../src/db/sql.js';
import { childCollectionsOf, keptLevelsOf } from '../../src/modules/collections/collection-loaders.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';

/*
 * A kept level the level statement finds current is answered with the children it was asked
 * about, even when the kept set dropped it while the statement ran: another row of the same read
 * keeping a large level, or anything else forgetting it (collection-loaders.ts childCollectionsOf).
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
const em = () => t.app.runtime.fork();

async function create(name: string, parentId?: string): Promise<string> {
  const r = await t.request('POST', '/v1/collections', { body: { name, parent_collection_id: parentId } });
  expect(r.status, r.text).toBe(200);
  return r.body.id;
}

// The 9,999 children are copied in SQL with SQLite's printf.
it.skipIf(onPostgres)('a kept level dropped by another row of the same read (a level filling the bound) is still answered', async () => {
  const first = await create('First');
  const second = await create('Second');
  // SQLite answers the parents in id order: the large level's row comes first, then the kept one's.
  const [other, one] = first < second ? [first, second] : [second, first];
  const child = await create('a', one);
  const template = await create('b', other);
  await childCollectionsOf(t.app.runtime, em(), [one]); // kept: one child
  const columns = (await executeSql<{ name: string }[]>(em(), 'pragma table_info(collections)', [])).map((c) => c.name).filter((c) => !['id', 'slug', 'name'].includes(c));
  await executeSql(
    em(),
    `with recursive n(i) as (select 1 union all select i + 1 from n where i < 9999)
     insert into collections (id, slug, name, ${columns.join(', ')})
     select printf('%s-%05d', c.id, i), c.slug || '-' || i, c.name || i, ${columns.map((c) => `c.${c}`).join(', ')} from n, collections c where c.id = ?`,
    [template],
    'run',
  );
  // Both parents in one read: keeping the other's 10,000 children (its row first) drops one's level.
  const [ones, others] = await childCollectionsOf(t.app.runtime, em(), [one, other]);
  expect(ones.map((c) => c.id)).toEqual([child]);
  expect(others).toHaveLength(10_000);
  expect(keptLevelsOf(t.app.runtime).children).toBeLessThanOrEqual(10_000);
});

it('a kept level forgotten while the statement runs is still answered', async () => {
  const parent = await create('Parent');
  const child = await create('x', parent);
  await childCollectionsOf(t.app.runtime, em(), [parent]);
  const reading = childCollectionsOf(t.app.runtime, em(), [parent]); // asks about the kept level now
  keptLevelsOf(t.app.runtime).forget(parent); // what a read inside a transaction, or an eviction, does
  const [level] = await reading;
  expect(level.map((c) => c.id)).toEqual([child]);
});
