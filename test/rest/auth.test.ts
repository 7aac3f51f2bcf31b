import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const missingKey = {
  error: { message: 'Missing API key: send it in the x-gateway-api-key header.', type: 'authentication_error', param: null, code: 'invalid_api_key' },
};
const invalidKey = { error: { message: 'Invalid API key.', type: 'authentication_error', param: null, code: 'invalid_api_key' } };

describe('authentication', () => {
  it('no key: 401 with the exact envelope', async () => {
    const res = await t.request('GET', '/v1/admin/workspaces', { key: null });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual(missingKey);
  });

  it('unknown key: 401 Invalid API key.', async () => {
    const res = await t.request('GET', '/v1/admin/workspaces', { key: 'gk_live_doesnotexist0000000000000000' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(invalidKey);
  });

  it('accepts x-portkey-api-key and Authorization: Bearer, with x-gateway-api-key taking precedence', async () => {
    const portkey = await t.request('GET', '/v1/admin/workspaces', { key: null, headers: { 'x-portkey-api-key': t.key } });
    expect(portkey.status).toBe(200);
    const bearer = await t.request('GET', '/v1/admin/workspaces', { key: null, headers: { authorization: `Bearer ${t.key}` } });
    expect(bearer.status).toBe(200);
    const precedence = await t.request('GET', '/v1/admin/workspaces', {
      key: 'gk_live_wrong_key_000000000000000000',
      headers: { 'x-portkey-api-key': t.key, authorization: `Bearer ${t.key}` },
    });
    expect(precedence.status).toBe(401);
    expect(precedence.body).toEqual(invalidKey);
    // x-portkey-api-key comes before Bearer; an empty header hides nothing.
    const portkeyFirst = await t.request('GET', '/v1/admin/workspaces', {
      key: null,
      headers: { 'x-portkey-api-key': 'gk_live_wrong_key_000000000000000000', authorization: `Bearer ${t.key}` },
    });
    expect(portkeyFirst.status).toBe(401);
    const empty = await t.request('GET', '/v1/admin/workspaces', { key: null, headers: { 'x-gateway-api-key': ' ', 'x-portkey-api-key': t.key } });
    expect(empty.status).toBe(200);
  });

  it('a revoked key is refused at once in the process that revoked it', async () => {
    const created = await t.request('POST', '/v1/admin/api-keys', { body: { name: 'temp', type: 'organisation' } });
    expect(created.status).toBe(200);
    expect((await t.request('GET', '/v1/admin/workspaces', { key: created.body.key })).status).toBe(200);
    const revoked = await t.request('DELETE', `/v1/admin/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.status).toBe('revoked');
    const after = await t.request('GET', '/v1/admin/workspaces', { key: created.body.key });
    expect(after.status).toBe(401);
    expect(after.body).toEqual(invalidKey);
  });

  it('a revoked key is refused by another process within the cache TTL', async () => {
    const created = await t.request('POST', '/v1/admin/api-keys', { body: { name: 'cached', type: 'organisation' } });
    // Warm the cache, then revoke behind its back (as another process would), directly in the database.
    expect((await t.request('GET', '/v1/admin/workspaces', { key: created.body.key })).status).toBe(200);
    await t.app.runtime.fork().getConnection().execute("update api_keys set status = 'revoked' where id = ?", [created.body.id]);
    expect((await t.request('GET', '/v1/admin/workspaces', { key: created.body.key })).status).toBe(200);
    // A TTL of 0 means no caching: the database decides on every request.
    const noCache = await createTestApp({ API_KEY_CACHE_TTL_MS: 0 });
    try {
      const k = await noCache.request('POST', '/v1/admin/api-keys', { body: { name: 'x', type: 'organisation' } });
      expect((await noCache.request('GET', '/v1/admin/workspaces', { key: k.body.key })).status).toBe(200);
      await noCache.app.runtime.fork().getConnection().execute("update api_keys set status = 'revoked' where id = ?", [k.body.id]);
      expect((await noCache.request('GET', '/v1/admin/workspaces', { key: k.body.key })).status).toBe(401);
    } finally {
      await noCache.close();
    }
  });

  it('GraphQL needs a key too, with the same message', async () => {
    const res = await t.graphql('{ viewer { organisation { id } } }', {}, null);
    expect(res.status).toBe(401);
    expect(res.errors?.[0].message).toBe('Missing API key: send it in the x-gateway-api-key header.');
    expect(res.errors?.[0].extensions).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
  });
});

describe('tenancy: another tenant’s resource does not exist', () => {
  it('a workspace key cannot see another workspace (404, same body as never created)', async () => {
    const a = await createWorkspaceWithKey(t, 'Tenant A');
    const b = await createWorkspaceWithKey(t, 'Tenant B');
    const own = await t.request('GET', `/v1/admin/workspaces/${a.workspaceId}`, { key: a.key });
    expect(own.status).toBe(200);
    const other = await t.request('GET', `/v1/admin/workspaces/${b.workspaceId}`, { key: a.key });
    const never = await t.request('GET', '/v1/admin/workspaces/00000000-0000-4000-8000-000000000000', { key: a.key });
    expect(other.status).toBe(404);
    expect(never.status).toBe(404);
    expect(other.body).toEqual({
      error: { message: `Workspace not found: '${b.workspaceId}'.`, type: 'invalid_request_error', param: 'id', code: 'workspace_not_found' },
    });
    expect(never.body.error.type).toBe(other.body.error.type);
    const bySlug = await t.request('GET', `/v1/admin/workspaces/${b.slug}`, { key: a.key });
    expect(bySlug.status).toBe(404);
    const list = await t.request('GET', '/v1/admin/workspaces', { key: a.key });
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([a.workspaceId]);
  });

  it('a workspace key may not create workspaces or organisation keys (403)', async () => {
    const a = await createWorkspaceWithKey(t, 'Tenant C');
    const ws = await t.request('POST', '/v1/admin/workspaces', { key: a.key, body: { name: 'nope' } });
    expect(ws.status).toBe(403);
    expect(ws.body).toEqual({
      error: { message: 'This operation needs an organisation API key.', type: 'permission_error', param: null, code: 'permission_denied' },
    });
    const key = await t.request('POST', '/v1/admin/api-keys', { key: a.key, body: { name: 'nope', type: 'organisation' } });
    expect(key.status).toBe(403);
    expect(key.body.error).toEqual({
      message: 'This operation needs an organisation API key.',
      type: 'permission_error',
      param: null,
      code: 'permission_denied',
    });
  });

  it("organisation A's key cannot reach organisation B's workspace", async () => {
    const other = await createOtherOrganisation(t);
    const res = await t.request('GET', `/v1/admin/workspaces/${other.workspaceId}`);
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe(`Workspace not found: '${other.workspaceId}'.`);
    const theirs = await t.request('GET', '/v1/admin/workspaces', { key: other.key });
    expect(theirs.body.data).toHaveLength(1);
    expect(theirs.body.data[0].id).toBe(other.workspaceId);
    const keys = await t.request('GET', '/v1/admin/api-keys', { key: other.key });
    expect(keys.body.data.map((k: { name: string }) => k.name)).toEqual(['other']);
    const revokeOurs = await t.request('DELETE', `/v1/admin/api-keys/${(await t.request('GET', '/v1/admin/api-keys')).body.data[0].id}`, { key: other.key });
    expect(revokeOurs.status).toBe(404);
  });
});
