import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { uuid } from '../../src/lib/ids.js';
import { changingDetails } from '../../src/modules/collections/collection-details.js';
import { CollectionSchema } from '../../src/modules/collections/collection.entity.js';
import { PromptVersionSchema } from '../../src/modules/collections/prompt-version.entity.js';
import { PromptSchema } from '../../src/modules/collections/prompt.entity.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * Nested reads are batched: the SQL statements a six-level tree query runs depend on its depth,
 * not on how many collections the tree holds (a 6-node chain and a 1,000-node tree cost the same).
 */

const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let t: TestApp;
let statements = 0;
let workspace: { id: string; organisationId: string };

/** Collections per level of the big tree: 1 + 3 + 9 + 27 + 81 + 879 = 1,000. */
const BIG_LEVELS = [1, 3, 9, 27, 81, 879];

interface Seeded {
  rootId: string;
  collections: number;
  prompts: number;
}

/** Inserts a tree level by level in one transaction: each level's nodes spread over the previous level's. */
async function seedTree(prefix: string, perLevel: number[], promptEvery: number): Promise<Seeded> {
  const now = clock.now();
  const collections: Array<Record<string, unknown>> = [];
  const prompts: Array<Record<string, unknown>> = [];
  let previous: string[] = [];
  perLevel.forEach((count, level) => {
    const current: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = uuid();
      const parentId = level === 0 ? null : previous[i % previous.length];
      const name = `${prefix} ${level + 1}.${String(i).padStart(4, '0')}`;
      collections.push({
        id,
        organisationId: workspace.organisationId,
        workspaceId: workspace.id,
        parentId,
        name,
        slug: `${prefix}-${level + 1}-${i}`,
        isDefault: false,
        status: 'active',
        createdAt: now,
        lastUpdatedAt: now,
      });
      if (i % promptEvery === 0) {
        prompts.push({
          id: uuid(),
          organisationId: workspace.organisationId,
          workspaceId: workspace.id,
          collectionId: id,
          name: `${name} prompt`,
          slug: `${prefix}-prompt-${level + 1}-${i}`,
          template: 'Hello {{name}}',
          model: 'gpt-4o-mini',
          version: 1,
          status: 'active',
          createdAt: now,
          lastUpdatedAt: now,
        });
      }
      current.push(id);
    }
    previous = current;
  });
  await t.app.runtime.fork().transactional(async (em) => {
    // Written beside the services, so their details are stored here as the services store them.
    await changingDetails(em, { details: collections.map((c) => c.id as string) }, async () => {
      await em.insertMany(CollectionSchema, collections as never[]);
      await em.insertMany(PromptSchema, prompts as never[]);
      await em.insertMany(
        PromptVersionSchema,
        prompts.map((p) => ({ id: uuid(), promptId: p.id, version: 1, name: p.name, template: p.template, model: p.model, createdAt: now })) as never[],
      );
    });
  });
  return { rootId: collections[0].id as string, collections: collections.length, prompts: prompts.length };
}

const LEVEL = 'id name details { childCollectionsCount promptsCount promptsLastUpdatedAt } prompts { id name }';
const SIX_LEVELS = `query($id: String!) {
  collection(idOrSlug: $id) { ${LEVEL}
    childCollections { ${LEVEL}
      childCollections { ${LEVEL}
        childCollections { ${LEVEL}
          childCollections { ${LEVEL}
            childCollections { ${LEVEL} parent { id name } ancestors { id }
              childCollections { id }
            }
          }
        }
      }
    }
  }
}`;

interface Node {
  id: string;
  details: { childCollectionsCount: number; promptsCount: number };
  prompts: unknown[];
  childCollections: Node[];
}

/** Collections per level and prompts in an answer. */
function shape(root: Node): { perLevel: number[]; prompts: number; childCounts: number } {
  const perLevel: number[] = [];
  let prompts = 0;
  let childCounts = 0;
  let level: Node[] = [root];
  while (level.length) {
    perLevel.push(level.length);
    for (const node of level) {
      prompts += node.prompts.length;
      childCounts += node.details.childCollectionsCount;
      expect(node.details.promptsCount).toBe(node.prompts.length);
      expect(node.details.childCollectionsCount).toBe(node.childCollections.length);
    }
    level = level.flatMap((node) => node.childCollections);
  }
  return { perLevel, prompts, childCounts };
}

async function measure(rootId: string): Promise<{ statements: number; data: { collection: Node } }> {
  statements = 0;
  const g = await t.graphql(SIX_LEVELS, { id: rootId });
  const counted = statements;
  expect(g.errors, JSON.stringify(g.errors)).toBeUndefined();
  return { statements: counted, data: g.data };
}

let small: Seeded;
let big: Seeded;

beforeAll(async () => {
  t = await createTestApp({}, { clock, onQuery: () => statements++ });
  const ws = (await t.request('GET', '/v1/admin/workspaces')).body.data[0];
  workspace = { id: ws.id, organisationId: t.app.bootstrapResult.organisationId! };
  small = await seedTree('small', [1, 1, 1, 1, 1, 1], 2);
  big = await seedTree('big', BIG_LEVELS, 3);
  // Authentication (key lookup, last-use write) happens once; the manual clock keeps it cached.
  await t.graphql('{ viewer { apiKey { id } } }');
});
afterAll(() => t.close());

it('seeds what the test claims: 1,000 collections six levels deep', () => {
  expect(big.collections).toBe(1000);
  expect(small.collections).toBe(6);
});

it('a six-level query costs the same statements for 6 collections and for 1,000', async () => {
  const smallRun = await measure(small.rootId);
  const bigRun = await measure(big.rootId);

  const smallShape = shape(smallRun.data.collection);
  const bigShape = shape(bigRun.data.collection);
  expect(smallShape).toEqual({ perLevel: [1, 1, 1, 1, 1, 1], prompts: small.prompts, childCounts: 5 });
  expect(bigShape).toEqual({ perLevel: BIG_LEVELS, prompts: big.prompts, childCounts: 999 });

  // Per level: children (their details in the same statement) and prompts; plus the root lookup
  // (its details in the same statement) and the ancestors of the deepest level. `parent` comes
  // from the level already loaded.
  expect(bigRun.statements).toBe(smallRun.statements);
  expect(bigRun.statements).toBeLessThanOrEqual(1 + 6 * 2 + 2);
});

// Three reads answer `details`, each with the rows in one statement: a level's children, a
// collection read by id or slug, and collections read by ids (a list page's, read again).
it('a child’s details read with its level equal its details read alone and through the loader', async () => {
  const details = 'details { childCollectionsCount promptsCount childCollectionsLastUpdatedAt promptsLastUpdatedAt }';
  const level = await t.graphql(`query($id: String!) { collection(idOrSlug: $id) { childCollections { id name ${details} } } }`, { id: big.rootId });
  expect(level.errors).toBeUndefined();
  const children: Array<{ id: string; name: string; details: unknown }> = level.data.collection.childCollections;
  const withPrompts = children.filter((child: any) => child.details.promptsCount > 0 && child.details.childCollectionsCount > 0);
  expect(withPrompts.length).toBeGreaterThan(0);
  for (const child of [children[0], withPrompts[0], children[children.length - 1]]) {
    const alone = await t.graphql(`query($id: String!) { collection(idOrSlug: $id) { id ${details} } }`, { id: child.id });
    expect(alone.data.collection.details).toEqual(child.details);
    const listed = await t.graphql(`query($name: String!) { collections(search: $name, pageSize: 100) { data { id ${details} } } }`, { name: child.name });
    expect(listed.errors).toBeUndefined();
    expect(listed.data.collections.data.find((row: { id: string }) => row.id === child.id).details).toEqual(child.details);
  }
});

it('the deepest level knows its parent and ancestors', async () => {
  const { data } = await measure(big.rootId);
  let node: any = data.collection;
  const path = [node.id];
  while (node.childCollections.length) {
    node = node.childCollections[node.childCollections.length - 1];
    path.push(node.id);
  }
  expect(path).toHaveLength(6);
  expect(node.parent.id).toBe(path[4]);
  expect(node.ancestors.map((a: { id: string }) => a.id)).toEqual(path.slice(0, 5));
});

it('statements for the same query grow with the depth asked for, not the rows', async () => {
  const shallow = `query($id: String!) { collection(idOrSlug: $id) { ${LEVEL} childCollections { ${LEVEL} childCollections { ${LEVEL} } } } }`;
  statements = 0;
  await t.graphql(shallow, { id: small.rootId });
  const smallShallow = statements;
  statements = 0;
  await t.graphql(shallow, { id: big.rootId });
  expect(statements).toBe(smallShallow);
  const { statements: deep } = await measure(big.rootId);
  expect(deep).toBeGreaterThan(smallShallow);
});

it('a page of prompts with their current versions costs the same statements for 2 prompts and for hundreds', async () => {
  const PAGE = `query($size: Int!) { prompts(pageSize: $size) { total data { id version currentVersion { id version template } } } }`;
  const run = async (size: number) => {
    statements = 0;
    const g = await t.graphql(PAGE, { size });
    expect(g.errors, JSON.stringify(g.errors)).toBeUndefined();
    return { statements, data: g.data.prompts };
  };
  const few = await run(2);
  const many = await run(1000);
  expect(many.data.total).toBe(small.prompts + big.prompts);
  expect(many.data.data).toHaveLength(small.prompts + big.prompts);
  for (const prompt of many.data.data) expect(prompt.currentVersion).toMatchObject({ id: expect.any(String), version: prompt.version });
  expect(many.statements).toBe(few.statements);
});

/** Statements of one query (its errors checked). */
async function statementsOf(query: string, variables: Record<string, unknown> = {}): Promise<number> {
  statements = 0;
  const g = await t.graphql(query, variables);
  expect(g.errors, JSON.stringify(g.errors)).toBeUndefined();
  return statements;
}

// A collection the request already returned (the one read, a level, a page, ancestors, a
// mutation's result) answers `parent` and a prompt's `collection` without a statement
// (src/modules/collections/known-collections.ts).
it('answers parent and a prompt’s collection from the collections the request already read', async () => {
  const id = { id: big.rootId };
  const levels = (inner: string) => `query($id: String!) { collection(idOrSlug: $id) { id ${inner} childCollections { id ${inner} childCollections { id ${inner} } } } }`;
  expect(await statementsOf(levels('parent { id name }'), id)).toBe(await statementsOf(levels(''), id));
  const prompts = (inner: string) => `query($id: String!) { collection(idOrSlug: $id) { id childCollections { id prompts { id ${inner} } } } }`;
  expect(await statementsOf(prompts('collection { id name }'), id)).toBe(await statementsOf(prompts(''), id));
  const chain = (inner: string) => `query($id: String!) { collection(idOrSlug: $id) { id childCollections { id ancestors { id ${inner} } } } }`;
  expect(await statementsOf(chain('parent { id }'), id)).toBe(await statementsOf(chain(''), id));

  const page = (inner: string) => `query($search: String!) { collections(search: $search, pageSize: 100) { data { id ${inner} } } }`;
  const search = { search: 'small' };
  expect(await statementsOf(page('parent { id name }'), search)).toBe(await statementsOf(page(''), search));

  // Parents nobody returned (a page of the third level) are read, in one statement for all of them.
  const third = { search: 'big 3.' };
  expect(await statementsOf(page('parent { id name }'), third)).toBe((await statementsOf(page(''), third)) + 1);
  const g = await t.graphql(page('name parent { id name }'), third);
  const parents = new Set<string>(g.data.collections.data.map((c: { parent: { name: string } }) => c.parent.name));
  expect(g.data.collections.data).toHaveLength(BIG_LEVELS[2]);
  expect([...parents].every((name) => name.startsWith('big 2.'))).toBe(true);
  expect(parents.size).toBe(BIG_LEVELS[1]);
});

// Every collection given to GraphQL is a CollectionRead (its details read with it), so `details` is a
// plain field: graphql-jit reads it inline for each child of a REST read, with no resolver call
// (a resolve-info, a path and closures per child: ~0.2 KB each, rest/compiled-operations.ts).
it('answers details as a field of the collection, with no resolver', async () => {
  const { schema } = await import('../../schema/index.js');
  const collection = schema.getType('Collection') as import('graphql').GraphQLObjectType;
  expect(collection.getFields().details.resolve).toBeUndefined();
  const details = 'details { childCollectionsCount promptsCount childCollectionsLastUpdatedAt promptsLastUpdatedAt }';
  const created = await t.graphql(`mutation($input: CreateCollectionInput!) { createCollection(input: $input) { id ${details} } }`, {
    input: { name: 'Known details', parentCollectionId: small.rootId },
  });
  expect(created.errors).toBeUndefined();
  expect(created.data.createCollection.details).toEqual({ childCollectionsCount: 0, promptsCount: 0, childCollectionsLastUpdatedAt: null, promptsLastUpdatedAt: null });
  const archived = await t.graphql(`mutation($id: String!) { archiveCollection(collectionId: $id) { id status ${details} } }`, { id: created.data.createCollection.id });
  expect(archived.errors).toBeUndefined();
  expect(archived.data.archiveCollection.status).toBe('archived');
});
