import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuid } from '../../src/lib/ids.js';
import { OrganisationSchema } from '../../src/modules/tenancy/organisation.entity.js';
import { insertApiKey, insertWorkspace } from '../../src/modules/tenancy/tenancy.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * A collection outside the caller's workspace (workspace keys) or organisation does not exist for
 * the caller: 404 with the same body as an id never created, by id and by slug.
 */

const NOT_FOUND = {
  status: 404,
  body: { error: { message: 'Collection not found.', type: 'invalid_request_error', param: 'collectionId', code: 'collection_not_found' } },
};

let t: TestApp;
let home: { id: string; slug: string };
let teamB: { id: string; slug: string; key: string };
let teamC: { id: string; slug: string };
let other: { organisationId: string; workspaceId: string; key: string };
/** A collection in the bootstrap organisation's default workspace. */
let secret: { id: string; slug: string };

function pick(r: { status: number; body: unknown }) {
  return { status: r.status, body: r.body };
}

async function workspace(name: string): Promise<{ id: string; slug: string }> {
  const r = await t.request('POST', '/v1/admin/workspaces', { body: { name } });
  expect(r.status, r.text).toBe(200);
  return { id: r.body.id, slug: r.body.slug };
}

async function workspaceKey(workspaceId: string): Promise<string> {
  const r = await t.request('POST', '/v1/admin/api-keys', { body: { name: 'ws key', type: 'workspace', workspace_id: workspaceId } });
  expect(r.status, r.text).toBe(200);
  return r.body.key;
}

async function create(body: Record<string, unknown>, key?: string): Promise<{ id: string; slug: string }> {
  const r = await t.request('POST', '/v1/collections', { body, key });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** A second organisation: the HTTP API never creates one, so straight through the ORM and services. */
async function otherOrganisation(): Promise<{ organisationId: string; workspaceId: string; key: string }> {
  const runtime = t.app.runtime;
  return runtime.fork().transactional(async (em) => {
    const now = runtime.clock.now();
    const organisation = em.create(OrganisationSchema, { id: uuid(), name: 'Other org', createdAt: now, updatedAt: now });
    await em.flush();
    const ws = await insertWorkspace(em, runtime, { organisationId: organisation.id, name: 'Default', slug: 'default', isDefault: true });
    const { key } = await insertApiKey(em, runtime, { organisationId: organisation.id, workspaceId: null, type: 'organisation', name: 'other' });
    return { organisationId: organisation.id, workspaceId: ws.id, key };
  });
}

beforeAll(async () => {
  t = await createTestApp();
  const workspaces = await t.request('GET', '/v1/admin/workspaces');
  home = workspaces.body.data.find((w: { slug: string }) => w.slug === 'default');
  const b = await workspace('Team B');
  teamB = { ...b, key: await workspaceKey(b.id) };
  teamC = await workspace('Team C');
  other = await otherOrganisation();
  secret = await create({ name: 'Secret plans' });
});
afterAll(() => t.close());

describe('every workspace has exactly one default collection', () => {
  it('made with the workspace, in its own workspace', async () => {
    for (const ws of [home, teamB, teamC]) {
      const r = await t.request('GET', `/v1/collections/default?workspace_id=${ws.id}`);
      expect(r.body).toMatchObject({ workspace_id: ws.id, slug: 'default', is_default: true, parent_collection_id: null, status: 'active' });
    }
    const ids = new Set<string>();
    for (const ws of [home, teamB, teamC]) {
      const list = await t.request('GET', `/v1/collections?workspace_id=${ws.id}&search=default`);
      const defaults = list.body.data.filter((c: { is_default: boolean }) => c.is_default);
      expect(defaults).toHaveLength(1);
      ids.add(defaults[0].id);
    }
    expect(ids.size).toBe(3);
  });

  it('also in a workspace created through GraphQL, and in another organisation', async () => {
    const g = await t.graphql('mutation { createWorkspace(input: {name: "Via GraphQL"}) { id } }');
    const id = g.data.createWorkspace.id;
    const list = await t.graphql('query($ws: String) { collections(workspaceId: $ws) { total data { isDefault slug workspaceId } } }', { ws: id });
    expect(list.data.collections).toEqual({ total: 1, data: [{ isDefault: true, slug: 'default', workspaceId: id }] });
    const theirs = await t.request('GET', '/v1/collections/default', { key: other.key });
    expect(theirs.body).toMatchObject({ workspace_id: other.workspaceId, is_default: true });
  });
});

describe('a workspace key', () => {
  it('cannot see another workspace’s collection, by id or by slug', async () => {
    expect(pick(await t.request('GET', `/v1/collections/${secret.id}`, { key: teamB.key }))).toEqual(NOT_FOUND);
    expect(pick(await t.request('GET', `/v1/collections/${secret.slug}`, { key: teamB.key }))).toEqual(NOT_FOUND);
    expect(pick(await t.request('GET', `/v1/collections/${secret.slug}?workspace_id=${teamB.id}`, { key: teamB.key }))).toEqual(NOT_FOUND);
  });

  it('cannot rename, archive or nest under it either', async () => {
    expect(pick(await t.request('PUT', `/v1/collections/${secret.id}`, { body: { name: 'Mine now' }, key: teamB.key }))).toEqual(NOT_FOUND);
    expect(pick(await t.request('DELETE', `/v1/collections/${secret.slug}`, { key: teamB.key }))).toEqual(NOT_FOUND);
    const nested = await t.request('POST', '/v1/collections', { body: { name: 'Sneaky', parent_collection_id: secret.id }, key: teamB.key });
    expect(pick(nested)).toEqual({
      status: 404,
      body: { error: { message: 'Parent collection not found.', type: 'invalid_request_error', param: 'parent_collection_id', code: 'collection_not_found' } },
    });
    const elsewhere = await t.request('POST', '/v1/collections', { body: { name: 'Sneaky', workspace_id: home.id }, key: teamB.key });
    expect(pick(elsewhere)).toEqual({
      status: 404,
      body: { error: { message: `Workspace not found: '${home.id}'.`, type: 'invalid_request_error', param: 'workspace_id', code: 'workspace_not_found' } },
    });
    const still = await t.request('GET', `/v1/collections/${secret.id}`);
    expect(still.body).toMatchObject({ name: 'Secret plans', status: 'active' });
  });

  it('works in its own workspace: creates there, lists only there, and `default` is its own', async () => {
    const mine = await create({ name: 'Secret plans' }, teamB.key);
    expect(mine.slug).toBe('secret-plans');
    const bySlug = await t.request('GET', '/v1/collections/secret-plans', { key: teamB.key });
    expect(bySlug.body).toMatchObject({ id: mine.id, workspace_id: teamB.id });
    const list = await t.request('GET', '/v1/collections', { key: teamB.key });
    expect(list.body.data.map((c: { workspace_id: string }) => c.workspace_id)).toEqual([teamB.id, teamB.id]);
    expect(list.body.total).toBe(2);
    const def = await t.request('GET', '/v1/collections/default', { key: teamB.key });
    expect(def.body.workspace_id).toBe(teamB.id);
    const foreign = await t.request('GET', `/v1/collections?workspace_id=${home.id}`, { key: teamB.key });
    expect(foreign.status).toBe(404);
  });

  it('GraphQL says the same: not found', async () => {
    const g = await t.graphql('query($id: String!) { collection(idOrSlug: $id) { id } }', { id: secret.id }, teamB.key);
    expect(g.data).toBeNull();
    expect(g.errors?.[0]).toMatchObject({ message: 'Collection not found.', extensions: { status: 404, code: 'collection_not_found' } });
  });
});

describe('an organisation key', () => {
  it('resolves a slug in its default workspace first, elsewhere when only one workspace has it', async () => {
    const onlyC = await create({ name: 'Only in C', workspace_id: teamC.id });
    expect((await t.request('GET', '/v1/collections/only-in-c')).body).toMatchObject({ id: onlyC.id, workspace_id: teamC.id });
    // `secret-plans` exists in the default workspace and in Team B: the default workspace wins.
    expect((await t.request('GET', '/v1/collections/secret-plans')).body).toMatchObject({ id: secret.id, workspace_id: home.id });
    expect((await t.request('GET', `/v1/collections/secret-plans?workspace_id=${teamB.slug}`)).body.workspace_id).toBe(teamB.id);
  });

  it('a slug in several other workspaces is ambiguous: 400 asking for the id or workspace_id', async () => {
    const inB = await create({ name: 'Shared name', workspace_id: teamB.id });
    const inC = await create({ name: 'Shared name', workspace_id: teamC.id });
    expect(inB.slug).toBe('shared-name');
    expect(inC.slug).toBe('shared-name');
    expect(pick(await t.request('GET', '/v1/collections/shared-name'))).toEqual({
      status: 400,
      body: {
        error: {
          message: "The slug 'shared-name' names collections in several workspaces: use the id, or pass 'workspace_id'.",
          type: 'invalid_request_error',
          param: 'collectionId',
          code: 'ambiguous_slug',
        },
      },
    });
    expect((await t.request('GET', `/v1/collections/shared-name?workspace_id=${teamC.id}`)).body.id).toBe(inC.id);
    expect((await t.request('GET', '/v1/collections/shared-name', { key: teamB.key })).body.id).toBe(inB.id);
  });
});

describe('another organisation', () => {
  it('cannot see our collections, by id or by slug, and we cannot see theirs', async () => {
    expect(pick(await t.request('GET', `/v1/collections/${secret.id}`, { key: other.key }))).toEqual(NOT_FOUND);
    expect(pick(await t.request('GET', `/v1/collections/${secret.slug}`, { key: other.key }))).toEqual(NOT_FOUND);
    expect(pick(await t.request('PUT', `/v1/collections/${secret.id}`, { body: { name: 'x' }, key: other.key }))).toEqual(NOT_FOUND);
    expect(pick(await t.request('DELETE', `/v1/collections/${secret.id}`, { key: other.key }))).toEqual(NOT_FOUND);
    const theirs = await create({ name: 'Their stuff' }, other.key);
    expect(pick(await t.request('GET', `/v1/collections/${theirs.id}`))).toEqual(NOT_FOUND);
    expect(pick(await t.request('GET', '/v1/collections/their-stuff'))).toEqual(NOT_FOUND);
    const nested = await t.request('POST', '/v1/collections', { body: { name: 'x', parent_collection_id: theirs.id } });
    expect(nested.status).toBe(404);
    const list = await t.request('GET', '/v1/collections', { key: other.key });
    expect(list.body.data.map((c: { slug: string }) => c.slug)).toEqual(['default', 'their-stuff']);
    expect((await t.request('GET', `/v1/collections?workspace_id=${home.id}`, { key: other.key })).status).toBe(404);
  });
});
