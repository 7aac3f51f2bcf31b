import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createOtherOrganisation } from '../helpers/tenants.js';

// A resource outside the caller's organisation does not exist for it — 404 with the
// same body as an id that was never created. Here: organisation A's key (the bootstrap key)
// addressing organisation B's workspace, on every route that takes a workspace, whole bodies.

let t: TestApp;
let b: { organisationId: string; workspaceId: string; key: string };
let aWorkspaceId: string;
const NEVER = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  t = await createTestApp();
  b = await createOtherOrganisation(t, 'Organisation B');
  aWorkspaceId = (await t.request('GET', '/v1/admin/workspaces/default')).body.id;
});
afterAll(() => t.close());

const notFound = (id: string, param: string) => ({
  error: { message: `Workspace not found: '${id}'.`, type: 'invalid_request_error', param, code: 'workspace_not_found' },
});

/** Each route that names a workspace, with where it names it (the envelope's `param`). */
const routes: { name: string; param: string; call: (id: string, key?: string) => ReturnType<TestApp['request']> }[] = [
  { name: 'GET /v1/admin/workspaces/{id}', param: 'id', call: (id, key) => t.request('GET', `/v1/admin/workspaces/${id}`, { key }) },
  {
    name: 'POST /v1/admin/api-keys (workspace key)',
    param: 'workspace_id',
    call: (id, key) => t.request('POST', '/v1/admin/api-keys', { key, body: { name: 'intruder', type: 'workspace', workspace_id: id } }),
  },
  { name: 'GET /v1/collections', param: 'workspace_id', call: (id, key) => t.request('GET', `/v1/collections?workspace_id=${id}`, { key }) },
  { name: 'POST /v1/collections', param: 'workspace_id', call: (id, key) => t.request('POST', '/v1/collections', { key, body: { name: 'Intruder', workspace_id: id } }) },
  { name: 'GET /v1/policies/usage-limits', param: 'workspace_id', call: (id, key) => t.request('GET', `/v1/policies/usage-limits?workspace_id=${id}`, { key }) },
  { name: 'GET /v1/guardrails', param: 'workspace_id', call: (id, key) => t.request('GET', `/v1/guardrails?workspace_id=${id}`, { key }) },
  {
    name: 'PUT /v1/integrations/{slug}/workspaces',
    param: 'workspaces[0].id',
    call: (id, key) => t.request('PUT', '/v1/integrations/local/workspaces', { key, body: { workspaces: [{ id, enabled: false }] } }),
  },
];

describe("organisation A's key addressing organisation B's workspace", () => {
  for (const route of routes) {
    it(`${route.name}: 404, the same body as a workspace never created`, async () => {
      const theirs = await route.call(b.workspaceId);
      expect(theirs.status).toBe(404);
      expect(theirs.headers.get('content-type')).toMatch(/^application\/json/);
      expect(theirs.body).toEqual(notFound(b.workspaceId, route.param));
      const never = await route.call(NEVER);
      expect(never.status).toBe(404);
      expect(never.body).toEqual(notFound(NEVER, route.param));
    });
  }

  it('GraphQL workspace(idOrSlug): the same 404 error as for a workspace never created', async () => {
    const query = 'query($id: String!) { workspace(idOrSlug: $id) { id name } }';
    const errorFor = (id: string) => ({
      data: null,
      errors: [
        {
          message: `Workspace not found: '${id}'.`,
          locations: [{ line: 1, column: 23 }],
          path: ['workspace'],
          extensions: { status: 404, type: 'invalid_request_error', param: 'id', code: 'workspace_not_found', headers: {}, extra: {} },
        },
      ],
    });
    expect((await t.graphql(query, { id: b.workspaceId })).body).toEqual(errorFor(b.workspaceId));
    expect((await t.graphql(query, { id: NEVER })).body).toEqual(errorFor(NEVER));
  });

  it('lists never show the other organisation’s workspace, and its slug names the caller’s own', async () => {
    const list = await t.request('GET', '/v1/admin/workspaces');
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([aWorkspaceId]);
    // Both organisations have a workspace `default`: the slug resolves inside the caller's organisation.
    const own = await t.request('GET', '/v1/admin/workspaces/default');
    expect(own.body.id).toBe(aWorkspaceId);
    const viewer = await t.graphql('{ viewer { workspaces { id } } }');
    expect(viewer.data).toEqual({ viewer: { workspaces: [{ id: aWorkspaceId }] } });
  });

  it('and the other way round: B’s key addressing A’s workspace', async () => {
    const res = await t.request('GET', `/v1/admin/workspaces/${aWorkspaceId}`, { key: b.key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(notFound(aWorkspaceId, 'id'));
    const own = await t.request('GET', '/v1/admin/workspaces/default', { key: b.key });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id: b.workspaceId, slug: 'default', defaults: { is_default: 1, object: 'workspace' } });
  });

  it('the refused writes changed nothing in organisation B', async () => {
    // No key was made for B's workspace, no collection in it, no access row of A's `local` for it.
    const keys = await t.request('GET', '/v1/admin/api-keys', { key: b.key });
    expect(keys.body.data.map((k: { name: string }) => k.name)).toEqual(['other']);
    const collections = await t.request('GET', '/v1/collections', { key: b.key });
    expect(collections.body.data.map((c: { name: string }) => c.name)).not.toContain('Intruder');
    const ourKeys = await t.request('GET', '/v1/admin/api-keys');
    expect(ourKeys.body.data.map((k: { name: string }) => k.name)).not.toContain('intruder');
    const access = await t.request('GET', '/v1/integrations/local/workspaces');
    expect(access.status).toBe(200);
    expect(access.body.workspaces.map((w: { id: string; enabled: boolean }) => [w.id, w.enabled])).toEqual([[aWorkspaceId, true]]);
  });
});
