/**
 * Administration inputs (workspaces, API keys) are one contract per operation
 * (src/modules/tenancy/tenancy.contract.ts): REST and GraphQL refuse the same input with the same
 * message, param and code, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectBothDoors } from '../helpers/both-doors.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const CREATE_WORKSPACE = 'mutation($input: CreateWorkspaceInput!) { createWorkspace(input: $input) { id } }';
const CREATE_KEY = 'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { key } }';
const SLUG = "'slug' must be 1–64 letters, digits, '-' or '_' (and not a UUID).";

async function counts(): Promise<{ workspaces: number; keys: number }> {
  return {
    workspaces: (await t.request('GET', '/v1/admin/workspaces')).body.total,
    keys: (await t.request('GET', '/v1/admin/api-keys')).body.total,
  };
}

describe('both front doors, one contract', () => {
  it.each([
    [{}, {}, "Missing required parameter: 'name'.", 'name', 'missing_required_parameter'],
    [{ name: '  ' }, { name: '  ' }, "'name' must be a non-empty string.", 'name', null],
    [{ name: 'n'.repeat(256) }, { name: 'n'.repeat(256) }, "'name' must be at most 255 characters.", 'name', null],
    [{ name: 'X', slug: 'has space' }, { name: 'X', slug: 'has space' }, SLUG, 'slug', 'invalid_value'],
    [{ name: 'X', slug: '' }, { name: 'X', slug: '' }, SLUG, 'slug', 'invalid_value'],
    [{ name: 'X', slug: 's'.repeat(65) }, { name: 'X', slug: 's'.repeat(65) }, SLUG, 'slug', 'invalid_value'],
    [{ name: 'X', slug: '00000000-0000-4000-8000-000000000000' }, { name: 'X', slug: '00000000-0000-4000-8000-000000000000' }, SLUG, 'slug', 'invalid_value'],
  ])('create workspace %j', async (rest, gql, message, param, code) => {
    const before = await counts();
    await expectBothDoors(t.request('POST', '/v1/admin/workspaces', { body: rest }), t.graphql(CREATE_WORKSPACE, { input: gql }), message, param, code as string);
    expect(await counts()).toEqual(before);
  });

  it.each([
    [{ type: 'workspace' }, { type: 'workspace' }, "Missing required parameter: 'name'.", 'name', 'missing_required_parameter'],
    [{ name: 'k' }, { name: 'k' }, "Missing required parameter: 'type'.", 'type', 'missing_required_parameter'],
    [{ name: 'k', type: 'admin' }, { name: 'k', type: 'admin' }, "Invalid value: 'admin'. Supported values are: 'organisation' and 'workspace'.", 'type', 'invalid_value'],
    [{ name: 'k', type: 'workspace', workspace_id: ' ' }, { name: 'k', type: 'workspace', workspaceId: ' ' }, "'workspace_id' must be a workspace id or slug.", 'workspace_id', 'invalid_value'],
    [{ name: 'k', type: 'organisation', workspace_id: 'default' }, { name: 'k', type: 'organisation', workspaceId: 'default' }, "'workspace_id' is only for workspace keys.", 'workspace_id', null],
    [{ name: '', type: 'workspace' }, { name: '', type: 'workspace' }, "'name' must be a non-empty string.", 'name', null],
  ])('create API key %j', async (rest, gql, message, param, code) => {
    const before = await counts();
    await expectBothDoors(t.request('POST', '/v1/admin/api-keys', { body: rest }), t.graphql(CREATE_KEY, { input: gql }), message, param, code as string);
    expect(await counts()).toEqual(before);
  });

  it('REST: a JSON value of the wrong type names its parameter (GraphQL variables are typed by the schema itself)', async () => {
    for (const [body, param] of [
      [{ name: 5 }, 'name'],
      [{ name: 'X', description: 7 }, 'description'],
    ] as const) {
      const res = await t.request('POST', '/v1/admin/workspaces', { body });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { error: { message: `Invalid type for '${param}': expected a string, but got an integer instead.`, type: 'invalid_request_error', param, code: 'invalid_type' } },
      });
    }
  });

  it('unknown keys are ignored by REST, as on every other create route', async () => {
    const res = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Extra keys', colour: 'blue' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Extra keys', slug: 'extra-keys' });
  });
});
