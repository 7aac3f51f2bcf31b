import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { executeSql } from '../../src/db/sql.js';
import { childCollectionsOf } from '../../src/modules/collections/collection-loaders.js';
import { CollectionSchema } from '../../src/modules/collections/collection.entity.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const MOVE = `mutation($id: String!, $parent: String) { moveCollection(collectionId: $id, input: { parentCollectionId: $parent }) { id } }`;
const CREATE_PROMPT = `mutation($input: CreatePromptInput!) { createPrompt(input: $input) { id } }`;

/*
 * A collection's `children_version` (migration 0012) is bumped by the database on every write of
 * one of its children, whatever makes it; a level read before is given again (the same frozen
 * array, its children not read) while the version is unchanged, and read again after any write
 * (collection-loaders.ts, childCollectionsOf).
 */

const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let t: TestApp;
/** Statements reading a level (the aggregate of a level's children), on either dialect. */
let levelStatements = 0;
/** Every statement. */
let statements = 0;

beforeAll(async () => {
  t = await createTestApp(
    {},
    {
      clock,
      onQuery: (sql) => {
        statements++;
        if (/json_group_array|json_agg/.test(sql)) levelStatements++;
      },
    },
  );
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

/** The level last given for each parent. */
const lastLevel = new Map<string, readonly unknown[]>();

/** The level's names, and whether its children were read (1: not the kept level given again); always one statement. */
async function read(parentId: string): Promise<{ names: string[]; statements: number; level: readonly unknown[] }> {
  const before = levelStatements;
  const [level] = await childCollectionsOf(t.app.runtime, em(), [parentId]);
  expect(levelStatements - before).toBe(1);
  const built = level === lastLevel.get(parentId) ? 0 : 1;
  lastLevel.set(parentId, level);
  return { names: level.map((c) => c.name), statements: built, level };
}

/** Each write kind: the parent's version moves by it, and the kept level is read again once, then kept. */
async function expectWriteSeen(parentIds: string[], write: () => Promise<unknown>, names: string[][]): Promise<void> {
  for (const id of parentIds) await read(id);
  const kept = [];
  for (const id of parentIds) kept.push(await read(id));
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
    () => ok(MOVE, { id: b, parent: elsewhere }),
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
    await childCollectionsOf(t.app.runtime, tx, [parent]);
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

it('keeps an empty level (a leaf) too, until a child is created in it', async () => {
  const leaf = await create('Leaf');
  await expectWriteSeen([leaf], () => create('First child', leaf), [['First child']]);
  const other = await create('Another leaf');
  expect((await read(other)).level).toEqual([]);
  expect((await read(other)).statements).toBe(0);
});

it('a move to and from the top level bumps the version of the parent it leaves or joins', async () => {
  const parent = await create('Top-level mover parent');
  const c = await create('Mover', parent);
  await create('Stays', parent);
  await expectWriteSeen([parent], () => ok(MOVE, { id: c, parent: null }), [['Stays']]);
  await expectWriteSeen([parent], () => ok(MOVE, { id: c, parent }), [['Mover', 'Stays']]);
});

/*
 * On PostgreSQL changingDetails locks the rows it writes and their parents, the parents read by
 * the locking statement before it waits. A move that commits while a writer waits on the moved
 * collection gives it a new parent the writer did not lock, and the bump of that parent (by the
 * writer's recompute) waited for a row locked out of order: with a second move holding it and
 * waiting for the old parent, a deadlock (a 500). The parents are read again under the lock.
 */
it('moves between two parents racing prompt writes in the moved collections never deadlock', async () => {
  const failures: unknown[] = [];
  let n = 0;
  for (let round = 0; round < 15; round++) {
    const g = await create(`Moves G${round}`);
    const p1 = await create(`Moves P1 ${round}`, g);
    const p2 = await create(`Moves P2 ${round}`, g);
    const under1 = [await create(`Moves a${round}`, p1), await create(`Moves b${round}`, p1)];
    const under2 = [await create(`Moves c${round}`, p2), await create(`Moves d${round}`, p2)];
    const jobs = [...under1.map((c) => [c, p2]), ...under2.map((c) => [c, p1])].flatMap(([c, to]) => [
      t.graphql(MOVE, { id: c, parent: to }),
      t.graphql(CREATE_PROMPT, { input: { collectionId: c, name: `Moves prompt ${n++}`, string: 'x', model: 'm' } }),
    ]);
    for (const r of await Promise.all(jobs)) if (r.errors) failures.push(r.errors);
    // Every collection moved, and each parent's details count what it holds now.
    const [one, two] = await Promise.all([p1, p2].map(async (id) => (await t.request('GET', `/v1/collections/${id}`)).body));
    expect(one.child_collections.map((x: any) => x.id).sort()).toEqual([...under2].sort());
    expect(two.child_collections.map((x: any) => x.id).sort()).toEqual([...under1].sort());
    const counts = (await t.request('GET', `/v1/collections/${g}`)).body.child_collections.map((x: any) => x.collection_details.child_collections_count);
    expect(counts).toEqual([2, 2]);
  }
  expect(failures).toEqual([]);
});

/*
 * A level costs one statement whether it is kept, read again or empty (a leaf): a tree query runs
 * one statement per level of depth, cold, warm and after a write (README, "Architecture").
 */
it('a tree of inner nodes beside leaves runs the same statements cold, warm and after a write', async () => {
  const root = await create('Mixed root');
  const a = await create('Mixed A', root);
  await create('Mixed B', root); // a leaf
  const a1 = await create('Mixed A1', a);
  await create('Mixed A2', a); // a leaf
  await create('Mixed A1x', a1);
  const TREE = `query($id: String!) { collection(idOrSlug: $id) { id childCollections { id childCollections { id childCollections { id } } } } }`;
  const counted = async (): Promise<number> => {
    const before = statements;
    await ok(TREE, { id: root });
    return statements - before;
  };
  const counts = [await counted(), await counted(), await counted()];
  await create('Mixed A3', a);
  counts.push(await counted());
  // The collection, then its three levels of children.
  expect(counts).toEqual([4, 4, 4, 4]);
});

it('two applications in one process never see each other’s kept levels (each database counts versions from 0)', async () => {
  const apps = [await createTestApp(), await createTestApp()];
  try {
    // The same parent id and version in both databases (as copies of one fixture), other children.
    const parent = '00000000-0000-4000-8000-0000000000aa';
    const levels = [];
    for (const [i, app] of apps.entries()) {
      const fork = app.app.runtime.orm.em.fork();
      const insert = `insert into collections (id, organisation_id, workspace_id, parent_id, name, slug, is_default, status, created_at, last_updated_at)
        values (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`;
      const now = new Date();
      const [org, ws] = ['00000000-0000-4000-8000-0000000000bb', '00000000-0000-4000-8000-0000000000cc'];
      await executeSql(fork, insert, [parent, org, ws, null, 'P', 'p-fixed', false, now, now], 'run');
      await executeSql(fork, insert, [`00000000-0000-4000-8000-00000000000${i + 1}`, org, ws, parent, `From ${i + 1}`, `from-${i + 1}`, false, now, now], 'run');
      levels.push((await childCollectionsOf(app.app.runtime, app.app.runtime.orm.em.fork(), [parent]))[0].map((c) => c.name));
    }
    // Read again, each kept by its own application.
    for (const app of apps) levels.push((await childCollectionsOf(app.app.runtime, app.app.runtime.orm.em.fork(), [parent]))[0].map((c) => c.name));
    expect(levels).toEqual([['From 1'], ['From 2'], ['From 1'], ['From 2']]);
  } finally {
    for (const app of apps) await app.close();
  }
});
