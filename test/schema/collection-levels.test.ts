import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { executeSql } from '../../src/db/sql.js';
import { childCollectionsOf, StoredTime } from '../../src/modules/collections/collection-loaders.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * A level of children is read and built again only when its parent's `children_version` changed
 * (collection-loaders.ts, childCollectionsOf): read again unchanged it gives the same children,
 * and any change to what the level shows, by any write, is read at once.
 */

const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({}, { clock });
});
afterAll(() => t.close());

async function create(name: string, parentId?: string): Promise<string> {
  clock.advance(1000);
  const r = await t.request('POST', '/v1/collections', { body: { name, parent_collection_id: parentId } });
  expect(r.status, r.text).toBe(200);
  return r.body.id;
}

/** The level as REST answers it: name, then details, per child. */
async function level(parentId: string): Promise<Array<[string, number, number]>> {
  const r = await t.request('GET', `/v1/collections/${parentId}`);
  expect(r.status, r.text).toBe(200);
  return r.body.child_collections.map((c: any) => [c.name, c.collection_details.child_collections_count, c.collection_details.prompts_count]);
}

const read = async (parentId: string) => (await childCollectionsOf(t.app.runtime, t.app.runtime.orm.em.fork(), [parentId]))[0];

it('gives the same children for an unchanged level and reads every change at once', async () => {
  const parent = await create('Parent');
  const a = await create('A', parent);
  const b = await create('B', parent);
  await create('C', parent);
  expect(await level(parent)).toEqual([['A', 0, 0], ['B', 0, 0], ['C', 0, 0]]);

  const first = await read(parent);
  const again = await read(parent);
  // Times that keep their ISO text (StoredTime, unit/collections/stored-time).
  expect(first[0].lastUpdatedAt).toBeInstanceOf(StoredTime);
  expect(first[0].createdAt).toBeInstanceOf(StoredTime);
  // Kept and shared: the same (frozen) children.
  expect(again).toBe(first);
  expect(Object.isFrozen(first[0])).toBe(true);

  // A child's own details change (its parent's row does not).
  await create('A child', a);
  const g = await t.graphql('mutation($input: CreatePromptInput!) { createPrompt(input: $input) { id } }', {
    input: { collectionId: b, name: 'B prompt', string: 'Hello', model: 'gpt-4o-mini' },
  });
  expect(g.errors).toBeUndefined();
  expect(await level(parent)).toEqual([['A', 1, 0], ['B', 0, 1], ['C', 0, 0]]);
  expect(await read(parent)).not.toBe(first);

  // A rename, and an archive.
  clock.advance(1000);
  expect((await t.request('PUT', `/v1/collections/${a}`, { body: { name: 'D' } })).status).toBe(200);
  expect(await level(parent)).toEqual([['B', 0, 1], ['C', 0, 0], ['D', 1, 0]]);
  expect((await t.request('DELETE', `/v1/collections/${b}`)).status).toBe(200);
  expect(await level(parent)).toEqual([['C', 0, 0], ['D', 1, 0]]);

  // A write that passes through no code of this process (as another process's would).
  await executeSql(t.app.runtime.orm.em.fork(), `update collections set name = 'E' where id = ?`, [a], 'run');
  expect(await level(parent)).toEqual([['C', 0, 0], ['E', 1, 0]]);
});
