import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const iso = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const uuid = expect.stringMatching(/^[0-9a-f-]{36}$/);

describe('/v1/admin/workspaces', () => {
  it('creates a workspace and answers the whole object', async () => {
    const res = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Research', description: 'R&D' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      id: uuid,
      slug: 'research',
      name: 'Research',
      description: 'R&D',
      defaults: { is_default: 0, object: 'workspace' },
      created_at: iso,
      last_updated_at: iso,
    });
    const byId = await t.request('GET', `/v1/admin/workspaces/${res.body.id}`);
    expect(byId.body).toEqual(res.body);
    const bySlug = await t.request('GET', '/v1/admin/workspaces/research');
    expect(bySlug.body).toEqual(res.body);
  });

  it('derives unique slugs from names', async () => {
    const a = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Ops Team' } });
    const b = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Ops  team!' } });
    expect([a.body.slug, b.body.slug]).toEqual(['ops-team', 'ops-team-2']);
  });

  it('rejects bad slugs and names with param', async () => {
    const slug = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'X', slug: 'has space' } });
    expect(slug.status).toBe(400);
    expect(slug.body.error).toEqual({ message: "'slug' must be 1–64 letters, digits, '-' or '_' (and not a UUID).", type: 'invalid_request_error', param: 'slug', code: 'invalid_value' });
    const long = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'n'.repeat(256) } });
    expect(long.body.error).toEqual({ message: "'name' must be at most 255 characters.", type: 'invalid_request_error', param: 'name', code: null });
  });

  it('lists the workspaces oldest first', async () => {
    const res = await t.request('GET', '/v1/admin/workspaces');
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.total).toBe(res.body.data.length);
    expect(res.body.data[0]).toMatchObject({ slug: 'default', defaults: { is_default: 1, object: 'workspace' } });
  });
});

describe('/v1/admin/api-keys', () => {
  it('creates a workspace key, shows the secret once, lists and revokes it', async () => {
    const created = await t.request('POST', '/v1/admin/api-keys', { body: { name: 'ci', type: 'workspace', workspace_id: 'default' } });
    expect(created.status).toBe(200);
    const defaultWs = (await t.request('GET', '/v1/admin/workspaces/default')).body.id;
    expect(created.body).toEqual({
      id: uuid,
      name: 'ci',
      type: 'workspace',
      workspace_id: defaultWs,
      key_prefix: created.body.key.slice(0, 12),
      status: 'active',
      created_at: iso,
      revoked_at: null,
      last_used_at: null,
      key: expect.stringMatching(/^gk_live_[A-Za-z0-9]{40}$/),
    });
    const list = await t.request('GET', '/v1/admin/api-keys');
    expect(list.text).not.toContain(created.body.key);
    const listed = list.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(listed).toEqual({ ...created.body, key: undefined, last_used_at: null });

    // Using a key records its last use.
    expect((await t.request('GET', '/v1/admin/workspaces', { key: created.body.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    const used = (await t.request('GET', '/v1/admin/api-keys')).body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(used.last_used_at).toEqual(iso);

    const revoked = await t.request('DELETE', `/v1/admin/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: created.body.id, status: 'revoked', revoked_at: iso });
  });

  it('refuses an unknown type and a workspace id on an organisation key', async () => {
    const type = await t.request('POST', '/v1/admin/api-keys', { body: { name: 'x', type: 'admin' } });
    expect(type.status).toBe(400);
    expect(type.body.error).toMatchObject({ param: 'type', code: 'invalid_value', type: 'invalid_request_error' });
    const ws = await t.request('POST', '/v1/admin/api-keys', { body: { name: 'x', type: 'organisation', workspace_id: 'default' } });
    expect(ws.body.error).toEqual({ message: "'workspace_id' is only for workspace keys.", type: 'invalid_request_error', param: 'workspace_id', code: null });
    const unknownWs = await t.request('POST', '/v1/admin/api-keys', { body: { name: 'x', type: 'workspace', workspace_id: 'nope' } });
    expect(unknownWs.status).toBe(404);
    expect(unknownWs.body.error).toEqual({ message: "Workspace not found: 'nope'.", type: 'invalid_request_error', param: 'workspace_id', code: 'workspace_not_found' });
  });

  it('revoking an unknown key is a 404', async () => {
    const res = await t.request('DELETE', '/v1/admin/api-keys/00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe("No API key found with id '00000000-0000-4000-8000-000000000000'.");
  });
});

describe('GraphQL tenancy operations', () => {
  it('viewer, createWorkspace, createApiKey, revokeApiKey', async () => {
    const viewer = await t.graphql('{ viewer { organisation { name } apiKey { name type status } workspaces { slug } } }');
    expect(viewer.data.viewer.organisation.name).toBe('Default organisation');
    expect(viewer.data.viewer.apiKey).toEqual({ name: 'Bootstrap key', type: 'organisation', status: 'active' });

    const ws = await t.graphql('mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { slug isDefault } }', { i: { name: 'Graph WS' } });
    expect(ws.data.createWorkspace).toEqual({ slug: 'graph-ws', isDefault: false });

    const key = await t.graphql('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key apiKey { id type workspaceId } } }', {
      i: { name: 'g', type: 'workspace', workspaceId: 'graph-ws' },
    });
    const { key: secret, apiKey } = key.data.createApiKey;
    const asKey = await t.graphql('{ viewer { workspaces { slug } apiKey { type } } }', {}, secret);
    expect(asKey.data.viewer).toEqual({ workspaces: [{ slug: 'graph-ws' }], apiKey: { type: 'workspace' } });
    const denied = await t.graphql('mutation { createWorkspace(input: { name: "x" }) { id } }', {}, secret);
    expect(denied.errors?.[0]).toMatchObject({ message: 'This operation needs an organisation API key.', extensions: { status: 403, type: 'permission_error' } });

    const revoked = await t.graphql('mutation($id: ID!) { revokeApiKey(id: $id) { status } }', { id: apiKey.id });
    expect(revoked.data.revokeApiKey.status).toBe('revoked');
    expect((await t.graphql('{ viewer { apiKey { id } } }', {}, secret)).status).toBe(401);
  });
});
