import { readFileSync } from 'node:fs';
import { RawQueryFragment } from '@mikro-orm/core';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/* GraphQL, the main reader of collections: deep trees in one query, moves, archiving and prompts. */

const T0 = '2026-11-22T10:00:00.000Z';

let t: TestApp;
const clock = new ManualClock(new Date(T0));
let workspaceId: string;

beforeAll(async () => {
  t = await createTestApp({}, { clock });
  workspaceId = (await t.request('GET', '/v1/admin/workspaces')).body.data[0].id;
});
afterAll(() => t.close());

function tick(): string {
  clock.advance(1000);
  return clock.now().toISOString();
}

/** Runs a document that must succeed. */
async function ok<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const g = await t.graphql<T>(query, variables);
  expect(g.errors, JSON.stringify(g.errors)).toBeUndefined();
  return g.data!;
}

/** Runs a document that must fail, and returns its first error's message and extensions. */
async function fails(query: string, variables: Record<string, unknown> = {}) {
  const g = await t.graphql(query, variables);
  expect(g.errors, JSON.stringify(g.body)).toBeDefined();
  const [error] = g.errors!;
  return { message: error.message, status: error.extensions.status, param: error.extensions.param, code: error.extensions.code };
}

const CREATE = `mutation($input: CreateCollectionInput!) { createCollection(input: $input) { id slug parentCollectionId } }`;
const MOVE = `mutation($id: String!, $parent: String) { moveCollection(collectionId: $id, input: { parentCollectionId: $parent }) { id parentCollectionId lastUpdatedAt } }`;
const ARCHIVE = `mutation($id: String!) { archiveCollection(collectionId: $id) { id status lastUpdatedAt } }`;
const CREATE_PROMPT = `mutation($input: CreatePromptInput!) { createPrompt(input: $input) { id slug version status collectionId } }`;

async function createCollection(name: string, parentCollectionId?: string | null, workspace?: string): Promise<string> {
  const data = await ok(CREATE, { input: { name, parentCollectionId, workspaceId: workspace } });
  return data.createCollection.id;
}

async function createPrompt(collectionId: string, name: string, template = 'Hi {{name}}'): Promise<string> {
  const data = await ok(CREATE_PROMPT, { input: { collectionId, name, string: template, model: 'gpt-4o-mini' } });
  return data.createPrompt.id;
}

/** root → l2 → l3 → l4 → l5 → l6, each level with a sibling leaf, prompts at levels 3 and 6. */
async function sixLevels(prefix: string) {
  const chain: string[] = [];
  const siblings: string[] = [];
  let parent: string | null = null;
  for (let level = 1; level <= 6; level++) {
    const id = await createCollection(`${prefix} L${level}`, parent);
    if (level > 1) siblings.push(await createCollection(`${prefix} L${level} sibling`, parent));
    chain.push(id);
    parent = id;
  }
  await createPrompt(chain[2], `${prefix} prompt A`);
  await createPrompt(chain[2], `${prefix} prompt B`);
  await createPrompt(chain[5], `${prefix} leaf prompt`);
  return { chain, siblings };
}

const LEVEL = `id name details { childCollectionsCount promptsCount childCollectionsLastUpdatedAt promptsLastUpdatedAt } prompts { name version }`;
const TREE = `query($id: String!) {
  collection(idOrSlug: $id) {
    ${LEVEL}
    childCollections { ${LEVEL}
      childCollections { ${LEVEL}
        childCollections { ${LEVEL}
          childCollections { ${LEVEL}
            childCollections { ${LEVEL} parent { id } ancestors { name }
              childCollections { id }
            }
          }
        }
      }
    }
  }
}`;

describe('a deep tree in one query', () => {
  it('six levels with counts, prompts, parents and ancestors', async () => {
    const { chain } = await sixLevels('Deep');
    const data = await ok(TREE, { id: chain[0] });
    let node = data.collection;
    const names: string[] = [];
    for (let level = 1; level <= 6; level++) {
      names.push(node.name);
      expect(node.details.childCollectionsCount, `level ${level}`).toBe(level < 6 ? 2 : 0);
      if (level < 6) {
        expect(node.childCollections.map((c: { name: string }) => c.name)).toEqual([`Deep L${level + 1}`, `Deep L${level + 1} sibling`]);
        node = node.childCollections[0];
      }
    }
    expect(names).toEqual(['Deep L1', 'Deep L2', 'Deep L3', 'Deep L4', 'Deep L5', 'Deep L6']);
    const l3 = data.collection.childCollections[0].childCollections[0];
    expect(l3.details.promptsCount).toBe(2);
    expect(l3.prompts).toEqual([
      { name: 'Deep prompt A', version: 1 },
      { name: 'Deep prompt B', version: 1 },
    ]);
    expect(node.parent).toEqual({ id: chain[4] });
    expect(node.ancestors.map((a: { name: string }) => a.name)).toEqual(['Deep L1', 'Deep L2', 'Deep L3', 'Deep L4', 'Deep L5']);
    expect(node.childCollections).toEqual([]);
    expect(node.details).toMatchObject({ childCollectionsCount: 0, promptsCount: 1, childCollectionsLastUpdatedAt: null });
  });

  it('details time the latest child and prompt change; null when empty', async () => {
    const created = tick();
    const root = await createCollection('Timed');
    const first = tick();
    const a = await createCollection('Timed a', root);
    const second = tick();
    await createCollection('Timed b', root);
    const promptAt = tick();
    await createPrompt(root, 'Timed prompt');
    let data = await ok(`query($id: String!) { collection(idOrSlug: $id) { createdAt details { childCollectionsCount promptsCount childCollectionsLastUpdatedAt promptsLastUpdatedAt } } }`, { id: root });
    expect(data.collection).toEqual({
      createdAt: created,
      details: { childCollectionsCount: 2, promptsCount: 1, childCollectionsLastUpdatedAt: second, promptsLastUpdatedAt: promptAt },
    });
    const renamed = tick();
    await ok(`mutation($id: String!) { updateCollection(collectionId: $id, input: { name: "Timed a2" }) { name lastUpdatedAt } }`, { id: a });
    data = await ok(`query($id: String!) { collection(idOrSlug: $id) { details { childCollectionsLastUpdatedAt } childCollections { name } } }`, { id: root });
    expect(data.collection).toEqual({ details: { childCollectionsLastUpdatedAt: renamed }, childCollections: [{ name: 'Timed a2' }, { name: 'Timed b' }] });
    expect(first < second).toBe(true);
  });

  it('a workspace, its page of collections and the total through GraphQL', async () => {
    const data = await ok(`query($ws: String) { collections(workspaceId: $ws, search: "deep l", currentPage: 0, pageSize: 3) { total data { name workspace { id } } } }`, {
      ws: workspaceId,
    });
    expect(data.collections.total).toBe(11);
    expect(data.collections.data).toEqual([
      { name: 'Deep L1', workspace: { id: workspaceId } },
      { name: 'Deep L2', workspace: { id: workspaceId } },
      { name: 'Deep L2 sibling', workspace: { id: workspaceId } },
    ]);
    const bad = await fails(`{ collections(pageSize: -1) { total } }`);
    expect(bad).toEqual({ message: "Invalid value for 'page_size': expected an integer from 0 to 1000.", status: 400, param: 'page_size', code: 'invalid_value' });
  });
});

describe('the README example and the limits it states', () => {
  const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
  const section = readme.split('## Collections and prompts')[1] ?? '';
  const example = /```graphql\n([\s\S]*?)```/.exec(section)?.[1] ?? '';

  it('the README tree query runs as printed', async () => {
    expect(example).toContain('query CollectionTree');
    const root = await createCollection('Readme root');
    const child = await createCollection('Readme child', root);
    await createCollection('Readme grandchild', child);
    await createPrompt(root, 'Readme prompt');
    const data = await ok(example, { id: root });
    expect(data.collection).toMatchObject({
      name: 'Readme root',
      details: { childCollectionsCount: 1, promptsCount: 1 },
      prompts: [{ name: 'Readme prompt', version: 1 }],
      childCollections: [{ name: 'Readme child', details: { childCollectionsCount: 1, promptsCount: 0 }, childCollections: [{ name: 'Readme grandchild' }] }],
    });
  });

  /** A tree read `levels` collections deep with details at every level: depth levels + 2. */
  function treeQuery(levels: number): string {
    let body = 'name details { childCollectionsCount promptsCount }';
    for (let i = 1; i < levels; i++) body = `name details { childCollectionsCount promptsCount } childCollections { ${body} }`;
    return `query { collection(idOrSlug: "default") { ${body} } }`;
  }

  it('14 levels with details fit in one query; 15 exceed depth 16', async () => {
    await ok(treeQuery(14));
    const g = await t.graphql(treeQuery(15));
    expect(g.data).toBeUndefined();
    expect(g.errors?.[0].message).toContain('Query depth limit of 16 exceeded, found 17');
  });
});

describe('moves', () => {
  it('moves a subtree under another collection; counts follow', async () => {
    const a = await createCollection('Move A');
    const b = await createCollection('Move B');
    const child = await createCollection('Move child', a);
    const grandchild = await createCollection('Move grandchild', child);
    const movedAt = tick();
    const data = await ok(MOVE, { id: child, parent: b });
    expect(data.moveCollection).toEqual({ id: child, parentCollectionId: b, lastUpdatedAt: movedAt });
    const tree = await ok(`query($a: String!, $b: String!, $g: String!) {
      a: collection(idOrSlug: $a) { details { childCollectionsCount } }
      b: collection(idOrSlug: $b) { details { childCollectionsCount } childCollections { id childCollections { id } } }
      g: collection(idOrSlug: $g) { ancestors { name } }
    }`, { a, b, g: grandchild });
    expect(tree).toEqual({
      a: { details: { childCollectionsCount: 0 } },
      b: { details: { childCollectionsCount: 1 }, childCollections: [{ id: child, childCollections: [{ id: grandchild }] }] },
      g: { ancestors: [{ name: 'Move B' }, { name: 'Move child' }] },
    });
  });

  it('to the top level with a null parent', async () => {
    const a = await createCollection('Top A');
    const child = await createCollection('Top child', a);
    const data = await ok(MOVE, { id: child, parent: null });
    expect(data.moveCollection.parentCollectionId).toBeNull();
    expect((await ok(`query($id: String!) { collection(idOrSlug: $id) { parent { id } ancestors { id } } }`, { id: child })).collection).toEqual({
      parent: null,
      ancestors: [],
    });
  });

  it('under itself or a descendant: 400, and nothing changes', async () => {
    const a = await createCollection('Cycle A');
    const b = await createCollection('Cycle B', a);
    const c = await createCollection('Cycle C', b);
    const cycle = {
      message: 'A collection cannot be moved under itself or one of its descendants.',
      status: 400,
      param: 'parent_collection_id',
      code: 'collection_cycle',
    };
    expect(await fails(MOVE, { id: a, parent: a })).toEqual(cycle);
    expect(await fails(MOVE, { id: a, parent: b })).toEqual(cycle);
    expect(await fails(MOVE, { id: a, parent: c })).toEqual(cycle);
    expect(await fails(MOVE, { id: b, parent: c })).toEqual(cycle);
    const data = await ok(`query($c: String!) { collection(idOrSlug: $c) { ancestors { id } } }`, { c });
    expect(data.collection.ancestors).toEqual([{ id: a }, { id: b }]);
  });

  it('the default collection cannot move; other refusals name their parameter', async () => {
    const a = await createCollection('Refuse A');
    expect(await fails(MOVE, { id: 'default', parent: a })).toEqual({
      message: 'The default collection cannot be moved.',
      status: 400,
      param: 'collectionId',
      code: 'default_collection',
    });
    expect(await fails(MOVE, { id: a, parent: 'nope' })).toEqual({
      message: "'parent_collection_id' must be a collection id (a UUID).",
      status: 400,
      param: 'parent_collection_id',
      code: 'invalid_value',
    });
    expect(await fails(MOVE, { id: a, parent: '00000000-0000-4000-8000-000000000000' })).toEqual({
      message: 'Parent collection not found.',
      status: 404,
      param: 'parent_collection_id',
      code: 'collection_not_found',
    });
    expect(await fails(MOVE, { id: 'no-such', parent: null })).toEqual({
      message: 'Collection not found.',
      status: 404,
      param: 'collectionId',
      code: 'collection_not_found',
    });
    const ws = await ok(`mutation { createWorkspace(input: { name: "Move elsewhere" }) { id } }`);
    const elsewhere = await createCollection('Elsewhere', null, ws.createWorkspace.id);
    expect(await fails(MOVE, { id: a, parent: elsewhere })).toEqual({
      message: 'The new parent collection is in another workspace.',
      status: 400,
      param: 'parent_collection_id',
      code: 'invalid_value',
    });
    const gone = await createCollection('Refuse gone');
    await ok(ARCHIVE, { id: gone });
    expect(await fails(MOVE, { id: a, parent: gone })).toMatchObject({ status: 400, code: 'collection_archived' });
    expect(await fails(MOVE, { id: gone, parent: a })).toMatchObject({ status: 400, code: 'collection_archived' });
  });
});

describe('archiving', () => {
  it('archives the collection with everything under it; the parent’s counts drop', async () => {
    const root = await createCollection('Arch root');
    const keep = await createCollection('Arch keep', root);
    const mid = await createCollection('Arch mid', root);
    const leaf = await createCollection('Arch leaf', mid);
    const promptInLeaf = await createPrompt(leaf, 'Arch leaf prompt');
    await createPrompt(keep, 'Arch keep prompt');
    const at = tick();
    const data = await ok(ARCHIVE, { id: mid });
    expect(data.archiveCollection).toEqual({ id: mid, status: 'archived', lastUpdatedAt: at });
    const after = await ok(`query($root: String!, $leaf: String!, $p: String!) {
      root: collection(idOrSlug: $root) { details { childCollectionsCount } childCollections { name details { promptsCount } } }
      leaf: collection(idOrSlug: $leaf) { status lastUpdatedAt }
      p: prompt(idOrSlug: $p) { status }
    }`, { root, leaf, p: promptInLeaf });
    expect(after).toEqual({
      root: { details: { childCollectionsCount: 1 }, childCollections: [{ name: 'Arch keep', details: { promptsCount: 1 } }] },
      leaf: { status: 'archived', lastUpdatedAt: at },
      p: { status: 'archived' },
    });
    const list = await ok(`{ collections(search: "Arch") { total data { name } } }`);
    expect(list.collections).toEqual({ total: 2, data: [{ name: 'Arch keep' }, { name: 'Arch root' }] });
  });

  it('refusals: the default collection, changes to archived collections, new children of them', async () => {
    expect(await fails(ARCHIVE, { id: 'default' })).toEqual({
      message: 'The default collection of a workspace cannot be archived.',
      status: 400,
      param: 'collectionId',
      code: 'default_collection',
    });
    const gone = await createCollection('Gone');
    await ok(ARCHIVE, { id: gone });
    expect(await fails(`mutation($id: String!) { updateCollection(collectionId: $id, input: { name: "x" }) { id } }`, { id: gone })).toEqual({
      message: 'Archived collections cannot be changed.',
      status: 400,
      param: 'collectionId',
      code: 'collection_archived',
    });
    expect(await fails(CREATE, { input: { name: 'Under gone', parentCollectionId: gone } })).toMatchObject({ status: 400, param: 'parent_collection_id' });
    expect(await fails(CREATE_PROMPT, { input: { collectionId: gone, name: 'p', string: 't', model: 'm' } })).toEqual({
      message: 'Prompts cannot be added to an archived collection.',
      status: 400,
      param: 'collection_id',
      code: 'collection_archived',
    });
  });
});

describe('prompts', () => {
  it('every update makes a new version and keeps the old ones', async () => {
    const c = await createCollection('Prompt home');
    const created = await ok(CREATE_PROMPT, { input: { collectionId: c, name: 'Support reply', string: 'v1 {{q}}', model: 'gpt-4o-mini' } });
    expect(created.createPrompt).toEqual({ id: expect.any(String), slug: 'support-reply', version: 1, status: 'active', collectionId: c });
    const id = created.createPrompt.id;
    const at2 = tick();
    await ok(`mutation($id: String!) { updatePrompt(promptId: $id, input: { string: "v2 {{q}}" }) { version } }`, { id });
    tick();
    const third = await ok(`mutation($id: String!) { updatePrompt(promptId: $id, input: { name: "Support answer", model: "gpt-4o" }) {
      name slug template model version lastUpdatedAt collection { id } versions { version name template model }
    } }`, { id: 'support-reply' });
    expect(third.updatePrompt).toEqual({
      name: 'Support answer',
      slug: 'support-reply',
      template: 'v2 {{q}}',
      model: 'gpt-4o',
      version: 3,
      lastUpdatedAt: clock.now().toISOString(),
      collection: { id: c },
      versions: [
        { version: 3, name: 'Support answer', template: 'v2 {{q}}', model: 'gpt-4o' },
        { version: 2, name: 'Support reply', template: 'v2 {{q}}', model: 'gpt-4o-mini' },
        { version: 1, name: 'Support reply', template: 'v1 {{q}}', model: 'gpt-4o-mini' },
      ],
    });
    expect(at2 < third.updatePrompt.lastUpdatedAt).toBe(true);
  });

  it('slugs are unique in the workspace; archived prompts leave lists and counts', async () => {
    const c = await createCollection('Prompt slugs');
    const a = await ok(CREATE_PROMPT, { input: { collectionId: c, name: 'Same', string: 't', model: 'm' } });
    const b = await ok(CREATE_PROMPT, { input: { collectionId: c, name: 'Same', string: 't', model: 'm' } });
    expect([a.createPrompt.slug, b.createPrompt.slug]).toEqual(['same', 'same-2']);
    const archived = await ok(`mutation($id: String!) { archivePrompt(promptId: $id) { status } }`, { id: b.createPrompt.id });
    expect(archived.archivePrompt.status).toBe('archived');
    const data = await ok(`query($id: String!) { collection(idOrSlug: $id) { details { promptsCount } prompts { slug } } }`, { id: c });
    expect(data.collection).toEqual({ details: { promptsCount: 1 }, prompts: [{ slug: 'same' }] });
    expect(await fails(`mutation($id: String!) { updatePrompt(promptId: $id, input: { name: "x" }) { id } }`, { id: b.createPrompt.id })).toEqual({
      message: 'Archived prompts cannot be changed.',
      status: 400,
      param: 'promptId',
      code: 'prompt_archived',
    });
  });

  it('bad input names its parameter', async () => {
    const c = await createCollection('Prompt input');
    const input = (over: Record<string, unknown>) => ({ input: { collectionId: c, name: 'n', string: 't', model: 'm', ...over } });
    expect(await fails(CREATE_PROMPT, input({ name: '' }))).toMatchObject({ status: 400, param: 'name' });
    expect(await fails(CREATE_PROMPT, input({ string: ' ' }))).toMatchObject({ status: 400, param: 'string', code: 'empty_string' });
    expect(await fails(CREATE_PROMPT, input({ string: 'x'.repeat(100_001) }))).toMatchObject({ status: 400, param: 'string', code: 'string_above_max_length' });
    expect(await fails(CREATE_PROMPT, input({ model: '' }))).toMatchObject({ status: 400, param: 'model' });
    expect(await fails(CREATE_PROMPT, input({ collectionId: 'no-such' }))).toEqual({
      message: 'Collection not found.',
      status: 404,
      param: 'collection_id',
      code: 'collection_not_found',
    });
    const p = await createPrompt(c, 'Input prompt');
    expect(await fails(`mutation($id: String!) { updatePrompt(promptId: $id, input: {}) { id } }`, { id: p })).toEqual({
      message: 'Send at least one field to change.',
      status: 400,
      param: null,
      code: 'missing_required_parameter',
    });
    expect(await fails(`{ prompt(idOrSlug: "no-such") { id } }`)).toEqual({ message: 'Prompt not found.', status: 404, param: 'promptId', code: 'prompt_not_found' });
  });
});

describe('searches', () => {
  it('a refused search leaves nothing behind in MikroORM’s cache of raw fragments (it would grow with every one)', async () => {
    const before = RawQueryFragment.checkCacheSize();
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(await fails(`query($ws: String) { collections(workspaceId: $ws, search: "x") { total } }`, { ws: unknown })).toMatchObject({ status: 404 });
    expect(await fails(`query($ws: String) { prompts(workspaceId: $ws, search: "x") { total } }`, { ws: unknown })).toMatchObject({ status: 404 });
    expect(await fails(`{ prompts(collectionId: "no-such", search: "x") { total } }`)).toMatchObject({ status: 404 });
    expect((await ok(`{ collections(search: "x") { total } prompts(search: "x") { total } }`)).collections.total).toBeGreaterThanOrEqual(0);
    expect(RawQueryFragment.checkCacheSize()).toBe(before);
  });
});
