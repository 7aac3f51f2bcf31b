import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AbstractSqlDriver } from '@mikro-orm/knex';
import { Migration0007CollectionDetails as PostgresMigration } from '../../src/db/migrations/postgresql/0007_collection_details.js';
import { Migration0007CollectionDetails as SqliteMigration } from '../../src/db/migrations/sqlite/0007_collection_details.js';
import { dialectOf, executeSql } from '../../src/db/sql.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * A collection's details are stored on it (src/modules/collections/collection-details.ts): after
 * every kind of write, each collection's stored details must equal what live data says, computed
 * here on its own. The reads answer the stored columns, so a write that forgot them shows here.
 */

const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({}, { clock });
});
afterAll(() => t.close());

interface Details {
  id: string;
  children: number;
  childrenLatest: number | null;
  prompts: number;
  promptsLatest: number | null;
}

const ms = (value: unknown): number | null => (value == null ? null : new Date(typeof value === 'number' ? value : String(value)).getTime());

/** Every collection's stored details beside the same counted from live rows. */
async function storedAndLive(): Promise<{ stored: Details[]; live: Details[] }> {
  const rows = await executeSql<Array<Record<string, unknown>>>(
    t.app.runtime.fork(),
    `select c.id, c.child_collections_count, c.child_collections_last_updated_at, c.prompts_count, c.prompts_last_updated_at,
       (select count(*) from collections k where k.parent_id = c.id and k.status = 'active') as live_children,
       (select max(k.last_updated_at) from collections k where k.parent_id = c.id and k.status = 'active') as live_children_latest,
       (select count(*) from prompts p where p.collection_id = c.id and p.status = 'active') as live_prompts,
       (select max(p.last_updated_at) from prompts p where p.collection_id = c.id and p.status = 'active') as live_prompts_latest
     from collections c order by c.id`,
    [],
  );
  const details = (r: Record<string, unknown>, [children, childrenLatest, prompts, promptsLatest]: string[]): Details => ({
    id: r.id as string,
    children: Number(r[children]),
    childrenLatest: ms(r[childrenLatest]),
    prompts: Number(r[prompts]),
    promptsLatest: ms(r[promptsLatest]),
  });
  return {
    stored: rows.map((r) => details(r, ['child_collections_count', 'child_collections_last_updated_at', 'prompts_count', 'prompts_last_updated_at'])),
    live: rows.map((r) => details(r, ['live_children', 'live_children_latest', 'live_prompts', 'live_prompts_latest'])),
  };
}

async function expectStoredLive(after: string): Promise<void> {
  const { stored, live } = await storedAndLive();
  expect(stored, after).toEqual(live);
}

async function ok(query: string, variables: Record<string, unknown> = {}): Promise<any> {
  clock.advance(1000);
  const g = await t.graphql(query, variables);
  expect(g.errors, JSON.stringify(g.errors)).toBeUndefined();
  return g.data;
}

const create = async (name: string, parent?: string): Promise<string> =>
  (await ok(`mutation($input: CreateCollectionInput!) { createCollection(input: $input) { id } }`, { input: { name, parentCollectionId: parent } })).createCollection.id;
const createPrompt = async (collectionId: string, name: string): Promise<string> =>
  (await ok(`mutation($input: CreatePromptInput!) { createPrompt(input: $input) { id } }`, { input: { collectionId, name, string: 'Hi {{name}}', model: 'gpt-4o-mini' } })).createPrompt.id;
const details = async (id: string) =>
  (await ok(`query($id: String!) { collection(idOrSlug: $id) { details { childCollectionsCount promptsCount childCollectionsLastUpdatedAt promptsLastUpdatedAt } } }`, { id })).collection.details;

it('stored details equal live data after every kind of write', async () => {
  const a = await create('Details A');
  const b = await create('Details B');
  await expectStoredLive('collections created at the top level');

  const a1 = await create('Details a1', a);
  const a2 = await create('Details a2', a);
  const a1x = await create('Details a1x', a1);
  await expectStoredLive('child collections created');
  expect(await details(a)).toMatchObject({ childCollectionsCount: 2, promptsCount: 0, promptsLastUpdatedAt: null });

  await ok(`mutation($id: String!) { updateCollection(collectionId: $id, input: { name: "Details a2 renamed" }) { id } }`, { id: a2 });
  const renamedAt = clock.now().toISOString();
  await expectStoredLive('a child renamed (its parent’s latest change moves)');
  expect((await details(a)).childCollectionsLastUpdatedAt).toBe(renamedAt);

  const p1 = await createPrompt(a1, 'Details p1');
  const p2 = await createPrompt(a1, 'Details p2');
  await expectStoredLive('prompts created');
  expect(await details(a1)).toMatchObject({ childCollectionsCount: 1, promptsCount: 2 });

  await ok(`mutation($id: String!) { updatePrompt(promptId: $id, input: { string: "Hello {{name}}" }) { id } }`, { id: p1 });
  await expectStoredLive('a prompt changed');
  await ok(`mutation($id: String!, $c: String!) { updatePrompt(promptId: $id, input: { collectionId: $c }) { id } }`, { id: p2, c: b });
  await expectStoredLive('a prompt moved to another collection');
  expect(await details(b)).toMatchObject({ promptsCount: 1 });
  expect(await details(a1)).toMatchObject({ promptsCount: 1 });

  await ok(`mutation($id: String!) { makePromptVersionDefault(promptId: $id, input: { version: 1 }) { id } }`, { id: p1 });
  await expectStoredLive('a prompt’s default version chosen');

  await ok(`mutation($id: String!, $parent: String) { moveCollection(collectionId: $id, input: { parentCollectionId: $parent }) { id } }`, { id: a1, parent: b });
  await expectStoredLive('a collection moved between parents');
  expect(await details(a)).toMatchObject({ childCollectionsCount: 1 });
  expect(await details(b)).toMatchObject({ childCollectionsCount: 1, promptsCount: 1 });

  await ok(`mutation($id: String!, $parent: String) { moveCollection(collectionId: $id, input: { parentCollectionId: $parent }) { id } }`, { id: a1x, parent: null });
  await expectStoredLive('a collection moved to the top level');
  expect(await details(a1)).toMatchObject({ childCollectionsCount: 0, childCollectionsLastUpdatedAt: null });

  await ok(`mutation($id: String!) { archivePrompt(promptId: $id) { id } }`, { id: p2 });
  await expectStoredLive('a prompt archived');
  expect(await details(b)).toMatchObject({ promptsCount: 0, promptsLastUpdatedAt: null });

  await ok(`mutation($id: String!, $parent: String) { moveCollection(collectionId: $id, input: { parentCollectionId: $parent }) { id } }`, { id: a1x, parent: a1 });
  const archived = await ok(
    `mutation($id: String!) { archiveCollection(collectionId: $id) { id details { childCollectionsCount promptsCount } } }`,
    { id: b },
  );
  // The answer of the archiving write itself: everything under it is archived.
  expect(archived.archiveCollection.details).toEqual({ childCollectionsCount: 0, promptsCount: 0 });
  await expectStoredLive('a collection archived with its subtree and prompts');
  expect(await details(a1)).toMatchObject({ childCollectionsCount: 0, promptsCount: 0 });
});

it('children created at once under one parent are all counted', async () => {
  const parent = await create('Details crowd');
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      t.graphql(`mutation($input: CreateCollectionInput!) { createCollection(input: $input) { id } }`, { input: { name: `Crowd ${i}`, parentCollectionId: parent } }),
    ),
  );
  for (const g of results) expect(g.errors).toBeUndefined();
  await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      t.graphql(`mutation($input: CreatePromptInput!) { createPrompt(input: $input) { id } }`, { input: { collectionId: parent, name: `Crowd p${i}`, string: 'x', model: 'm' } }),
    ),
  );
  await expectStoredLive('concurrent creations');
  expect(await details(parent)).toMatchObject({ childCollectionsCount: 12, promptsCount: 6 });
});

it('migration 0007 fills the details of collections written before it from live data', async () => {
  const em = t.app.runtime.fork();
  // As before 0007: every collection at the columns' defaults, whatever it holds.
  await executeSql(em, 'update collections set child_collections_count = 0, child_collections_last_updated_at = null, prompts_count = 0, prompts_last_updated_at = null', [], 'run');
  const { stored, live } = await storedAndLive();
  expect(stored).not.toEqual(live);

  const Migration = dialectOf(em) === 'postgresql' ? PostgresMigration : SqliteMigration;
  const migration = new Migration(em.getDriver() as AbstractSqlDriver, em.config);
  await migration.up();
  // Its last statement fills them (the ones before add the columns, which exist here).
  const fill = migration.getQueries().at(-1) as string;
  expect(fill).toMatch(/^update/);
  await executeSql(em, fill, [], 'run');
  await expectStoredLive('the backfill');
});

/*
 * Writers that touch the same collections at once, many times over (on PostgreSQL each takes its
 * rows' locks; a writer that updated a row it had not locked in order deadlocked with another, and
 * PostgreSQL's abort answered 500). Every answer is a success or a 4xx of the contract, and after
 * them the stored details equal live data and nothing active is left inside an archived collection.
 */
it('conflicting writers at once: no 5xx, details equal live data, nothing active under an archived collection', async () => {
  const RENAME = `mutation($id: String!) { updateCollection(collectionId: $id, input: { name: "Renamed" }) { id } }`;
  const ARCHIVE = `mutation($id: String!) { archiveCollection(collectionId: $id) { id } }`;
  const MOVE = `mutation($id: String!, $parent: String) { moveCollection(collectionId: $id, input: { parentCollectionId: $parent }) { id } }`;
  const MOVE_PROMPT = `mutation($id: String!, $c: String!) { updatePrompt(promptId: $id, input: { collectionId: $c }) { id } }`;
  const CREATE = `mutation($input: CreateCollectionInput!) { createCollection(input: $input) { id } }`;
  const CREATE_PROMPT = `mutation($input: CreatePromptInput!) { createPrompt(input: $input) { id } }`;
  const answers: Array<{ pair: string; errors: unknown }> = [];
  for (let round = 0; round < 8; round++) {
    const p = await create(`Race P${round}`);
    const x = await create(`Race X${round}`, p);
    const y = await create(`Race Y${round}`, p);
    const q = await create(`Race Q${round}`);
    const z = await create(`Race Z${round}`, q);
    const a = await create(`Race A${round}`, q);
    const prompt = await createPrompt(a, `Race prompt ${round}`);
    const w = await create(`Race W${round}`);
    const pairs: Array<[string, string, Record<string, unknown>]> = [
      ['rename X', RENAME, { id: x }],
      ['archive X', ARCHIVE, { id: x }],
      ['move Y under Q', MOVE, { id: y, parent: q }],
      ['archive P', ARCHIVE, { id: p }],
      ['move Z to the top', MOVE, { id: z, parent: null }],
      ['archive Z', ARCHIVE, { id: z }],
      ['rename A', RENAME, { id: a }],
      ['move a prompt from A to its parent', MOVE_PROMPT, { id: prompt, c: q }],
      ['create under W', CREATE, { input: { name: `Race W child ${round}`, parentCollectionId: w } }],
      ['create a prompt in W', CREATE_PROMPT, { input: { collectionId: w, name: `Race W prompt ${round}`, string: 'x', model: 'm' } }],
      ['archive W', ARCHIVE, { id: w }],
    ];
    const results = await Promise.all(pairs.map(([, query, variables]) => t.graphql(query, variables)));
    results.forEach((g, i) => answers.push({ pair: pairs[i][0], errors: g.errors }));
  }
  const failures = answers.filter((a) => (a.errors as Array<{ extensions?: { status?: number; code?: string } }> | undefined)?.some((e) => e.extensions?.code !== 'collection_archived'));
  expect(failures).toEqual([]);
  await expectStoredLive('conflicting writers at once');
  const strays = await executeSql<unknown[]>(
    t.app.runtime.fork(),
    `select k.id from collections k join collections c on c.id = k.parent_id where k.status = 'active' and c.status = 'archived'
     union all select p.id from prompts p join collections c on c.id = p.collection_id where p.status = 'active' and c.status = 'archived'`,
    [],
  );
  expect(strays).toEqual([]);
});
