import { Portkey } from 'portkey-ai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * The portkey-ai SDK's generic helpers (get/post/put/delete) against the policy routes on a real
 * server: it sends x-portkey-api-key, converts top-level camelCase keys to snake_case, sends a JSON
 * body on DELETE, and needs JSON on every answer.
 */

const T0 = '2026-11-22T10:00:00.000Z';
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

let t: TestApp;
let client: Portkey;
let workspaceId: string;
let organisationId: string;

beforeAll(async () => {
  t = await createTestApp({}, { clock: new ManualClock(new Date(T0)) });
  client = new Portkey({ apiKey: t.key, baseURL: `${await t.listen()}/v1` });
  const ws = (await t.request('GET', '/v1/admin/workspaces')).body.data[0];
  workspaceId = ws.id;
  organisationId = t.app.bootstrapResult.organisationId!;
});
afterAll(() => t.close());

/** The SDK adds helpers (getHeaders) to what it returns; compare the JSON. */
function plain(value: unknown): any {
  return JSON.parse(JSON.stringify(value));
}

it('post / get / put / delete a usage-limits policy', async () => {
  const created = plain(
    await client.post('/policies/usage-limits', {
      name: 'SDK budget',
      conditions: [{ key: 'workspace_id', value: workspaceId }],
      // camelCase top-level keys become snake_case on the wire.
      groupBy: [{ key: 'api_key' }],
      type: 'cost',
      creditLimit: 25,
      alertThreshold: 20,
      periodicReset: 'monthly',
      workspaceId: 'default',
    } as any),
  );
  expect(created).toEqual({ id: UUID, object: 'policy_usage_limits' });

  const expected = {
    id: created.id,
    object: 'policy_usage_limits',
    name: 'SDK budget',
    type: 'cost',
    status: 'active',
    workspace_id: workspaceId,
    organisation_id: organisationId,
    conditions: [{ key: 'workspace_id', value: workspaceId }],
    group_by: [{ key: 'api_key' }],
    credit_limit: 25,
    alert_threshold: 20,
    periodic_reset: 'monthly',
    next_usage_reset_at: '2026-12-01T00:00:00.000Z',
    last_reset_at: null,
    value_key_usage_map: {},
    created_at: T0,
    last_updated_at: T0,
  };
  expect(plain(await client.get(`/policies/usage-limits/${created.id}`))).toEqual(expected);

  const list = plain(await client.get('/policies/usage-limits?type=cost&page_size=10&current_page=0'));
  const { object: _object, ...item } = expected;
  expect(list).toEqual({ object: 'list', data: [item], total: 1 });

  expect(plain(await client.put(`/policies/usage-limits/${created.id}`, { creditLimit: 30, name: 'SDK budget 2' } as any))).toEqual({});
  expect(plain(await client.get(`/policies/usage-limits/${created.id}`))).toMatchObject({ credit_limit: 30, name: 'SDK budget 2' });

  expect(plain(await client.delete(`/policies/usage-limits/${created.id}`))).toEqual({});
  expect(plain(await client.get('/policies/usage-limits?status=archived'))).toMatchObject({ total: 1, data: [{ id: created.id, status: 'archived' }] });
  expect(plain(await client.get('/policies/usage-limits'))).toEqual({ object: 'list', data: [], total: 0 });
});

it('errors reach the SDK as APIError with the status and the envelope', async () => {
  const bad = client.get('/policies/usage-limits?page_size=5000');
  await expect(bad).rejects.toMatchObject({
    status: 400,
    error: {
      error: {
        message: "Invalid value for 'page_size': expected an integer from 0 to 1000.",
        type: 'invalid_request_error',
        param: 'page_size',
        code: 'invalid_value',
      },
    },
  });
  await expect(client.get('/policies/usage-limits/00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
    status: 404,
    error: { error: { message: 'Usage limits policy not found.', type: 'invalid_request_error', param: 'id', code: 'policy_not_found' } },
  });
  await expect(
    client.post('/policies/usage-limits', { conditions: [], group_by: [{ key: 'api_key' }], type: 'tokens', credit_limit: 1 } as any),
  ).rejects.toMatchObject({ status: 400, error: { error: { param: 'conditions' } } });
});
