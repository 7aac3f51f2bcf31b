import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { executeSql } from '../../src/db/sql.js';
import { childCollectionsOf } from '../../src/modules/collections/collection-loaders.js';
import { CollectionSchema } from '../../src/modules/collections/collection.entity.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * A collection's `children_version` (migration 0012) is bumped by the database on every write of
 * one of its children, whatever makes it; a level read before is given again without its children
 * statement while the version is unchanged, and read again after any write
 * (collection-loaders.ts, childCollectionsOf).
 */

const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let t: TestApp;
/** Children statements run (the aggregate of a level's children), on either dialect. */
let childrenStatements = 0;

beforeAll(async () => {
  t = await createTestApp({}, { clock, onQuery: (sql) => void (/json_group_array|json_agg/.test(sql) && childrenStatements++) });
});
afterAll(() => t.close());

const em = () => t.app.runtime.orm.em.fork();
const sql = (text: string, params: unknown[]) => executeSql(em(), text, params, 'run');

async function ok(query: string, variables: Record<string, unknown>): Promise<any> {
  const r = await t.graphql(query, variables);
  expect(r.errors).toBeUndefined();
  return r.data;
}

async function create(name: string, parentId?: string): Promise<string> {
  clock.advance(1000);
  const r = await t.request('POST', '/v1/collections', { body: { name, parent_collection_id: parentId } });
  expect(r.status, r.text).toBe(200);
  return r.body.id;
}

async function version(id: string): Promise<number> {
  const [row] = await executeSql<Array<{ v: number | string }>>(em(), 'select children_version as v from collections where id = ?', [id]);
  return Number(row.v);
}

/** The level's names, and how many children statements reading it ran. */
async function read(parentId: string): Promise<{ names: string[]; statements: number; level: readonly unknown[] }> {
  const before = childrenStatements;
  const [level] = await childCollectionsOf(em(), [parentId]);
  return { names: level.map((c) => c.name), statements: childrenStatements - before, level };
}

/** Each write kind: the parent's version moves by it, and the kept level is read again once, then kept. */
async function expectWriteSeen(parentIds: string[], write: () => Promise<unknown>, names: string[][]): Promise<void> {
  for (const id of parentIds) await read(id);
  const kept = await Promise.all(parentIds.map(read));
  for (const k of kept) expect(k.statements).toBe(0);
  const versions = await Promise.all(parentIds.map(version));
  await write();
  for (const [i, id] of parentIds.entries()) {
    expect(await version(id)).toBeGreaterThan(versions[i]);
    const after = await read(id);
    expect(after.names).toEqual(names[i]);
    expect(after.statements).toBe(1);
    const again = await read(id);
    expect(again.statements).toBe(0);
    expect(again.level).toBe(after.level);
  }
}

it('gives a level again without its children statement while its version is unchanged', async () => {
  const parent = await create('Parent');
  await create('A', parent);
  await create('B', parent);
  const first = await read(parent);
  expect(first.names).toEqual(['A', 'B']);
  const again = await read(parent);
  expect(again.statements).toBe(0);
  expect(again.level).toBe(first.level);
  expect(Object.isFrozen(again.level)).toBe(true);
  // Writes elsewhere (another parent's child, the parent's own row) leave it kept.
  const other = await create('Other');
  const v = await version(parent);
  await create('X', other);
  await sql('update collections set name = ? where id = ?', ['Parent renamed', parent]);
  expect(await version(parent)).toBe(v);
  expect((await read(parent)).statements).toBe(0);
});

it('every kind of write to a child bumps its parent’s version and the level is read again', async () => {
  const parent = await create('P');
  const a = await create('A', parent);
  const b = await create('B', parent);
  const elsewhere = await create('Elsewhere');

  // Insert.
  let c = '';
  await expectWriteSeen([parent], async () => (c = await create('C', parent)), [['A', 'B', 'C']]);
  // Rename.
  await expectWriteSeen([parent], () => t.request('PUT', `/v1/collections/${a}`, { body: { name: 'A2' } }), [['A2', 'B', 'C']]);
  // A child's details: a prompt created in it.
  await expectWriteSeen(
    [parent],
    () =>
      ok('mutation($input: CreatePromptInput!) { createPrompt(input: $input) { id } }', {
        input: { collectionId: b, name: 'B prompt', string: 'Hello', model: 'gpt-4o-mini' },
      }),
    [['A2', 'B', 'C']],
  );
  expect((await read(parent)).level.map((x: any) => x.promptsCount)).toEqual([0, 1, 0]);
  // Archive.
  await expectWriteSeen([parent], () => t.request('DELETE', `/v1/collections/${c}`), [['A2', 'B']]);
  // A move: both levels change.
  await read(elsewhere);
  await create('E', elsewhere);
  await expectWriteSeen(
    [parent, elsewhere],
    () => ok(`mutation($id: String!, $parent: String) { moveCollection(collectionId: $id, input: { parentCollectionId: $parent }) { id } }`, { id: b, parent: elsewhere }),
    [['A2'], ['B', 'E']],
  );
  // Raw SQL, as another process would write: an update, then a delete.
  await expectWriteSeen([parent], () => sql('update collections set slug = ? where id = ?', ['a-two', a]), [['A2']]);
  expect((await read(parent)).level.map((x: any) => x.slug)).toEqual(['a-two']);
  await expectWriteSeen([elsewhere], () => sql('delete from collections where id = ?', [b]), [['E']]);
});

it('the ORM never writes the version back: an entity loaded before a bump keeps it when saved', async () => {
  const parent = await create('Saved parent');
  const fork = em();
  const entity = await fork.findOneOrFail(CollectionSchema, { id: parent });
  expect(entity.childrenVersion).toBeUndefined();
  await create('Child', parent);
  const bumped = await version(parent);
  expect(bumped).toBeGreaterThan(0);
  entity.name = 'Saved parent renamed';
  await fork.flush();
  expect(await version(parent)).toBe(bumped);
});

it('does not keep a level read inside a transaction', async () => {
  const parent = await create('In a transaction');
  await create('A', parent);
  await t.app.runtime.orm.em.fork().transactional(async (tx) => {
    await childCollectionsOf(tx, [parent]);
  });
  expect((await read(parent)).statements).toBe(1);
  expect((await read(parent)).statements).toBe(0);
});

/*
 * On PostgreSQL a write of a collection row also updates its parent's row (the version's trigger):
 * writers that lock a collection and its parent in id order (changingDetails) must not wait for
 * each other in a circle through that update (PostgreSQL aborts one: a 500).
 */
it('writers under one parent at once never deadlock through the version bump', async () => {
  const CREATE_PROMPT = `mutation($input: CreatePromptInput!) { createPrompt(input: $input) { id } }`;
  const RENAME = `mutation($id: String!, $name: String!) { updateCollection(collectionId: $id, input: { name: $name }) { id } }`;
  const ARCHIVE = `mutation($id: String!) { archiveCollection(collectionId: $id) { id } }`;
  const failures: unknown[] = [];
  for (let round = 0; round < 8; round++) {
    const g = await create(`Race G${round}`);
    const ws = [await create(`Race W${round}a`, g), await create(`Race W${round}b`, g), await create(`Race W${round}c`, g)];
    const results = await Promise.all(
      ws.flatMap((w, i) => [
        t.graphql(CREATE_PROMPT, { input: { collectionId: w, name: `Race prompt ${round}${i}`, string: 'x', model: 'm' } }),
        t.graphql(RENAME, { id: w, name: `Race W${round}${i} renamed` }),
        t.graphql(CREATE_PROMPT, { input: { collectionId: w, name: `Race prompt ${round}${i} again`, string: 'x', model: 'm' } }),
        i === 1 ? t.graphql(ARCHIVE, { id: w }) : t.graphql(RENAME, { id: g, name: `Race G${round} ${i}` }),
      ]),
    );
    for (const r of results) {
      const errors = (r.errors ?? []) as Array<{ extensions?: { code?: string } }>;
      if (errors.some((e) => e.extensions?.code !== 'collection_archived')) failures.push(r.errors);
    }
  }
  expect(failures).toEqual([]);
});
