import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { matchingPolicySpecs } from '../../src/modules/policies/policies.service.js';
import type { UsageRequest } from '../../src/modules/usage/conditions.js';
import { usageEngine } from '../../src/modules/usage/usage-engine.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { errorResponse } from '../helpers/errors.js';
import { BAD_PAGING } from '../helpers/paging.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';

/*
 * Whole-body contract tests of the usage-limits policy routes (docs/contract.md#usage-limit-policies).
 * A manual clock makes every time exact; only generated ids are matched by shape.
 */

const T0 = '2026-11-22T10:00:00.000Z';
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const JSON_TYPE = 'application/json; charset=utf-8';
const BASE = '/v1/policies/usage-limits';

let t: TestApp;
const clock = new ManualClock(new Date(T0));
let organisationId: string;
let workspaceId: string;
let teamB: { workspaceId: string; slug: string; key: string };
let defaultKey: string;
let apiKeyId: string;

const NOT_FOUND = errorResponse(404, 'Usage limits policy not found.', 'id', 'policy_not_found');

const minimal = { conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }], type: 'tokens', credit_limit: 100 };

async function create(body: Record<string, unknown>, key?: string): Promise<string> {
  const r = await t.request('POST', BASE, { body, key });
  expect(r.status, r.text).toBe(200);
  expect(r.body).toEqual({ id: UUID, object: 'policy_usage_limits' });
  return r.body.id;
}

async function expectError(method: string, path: string, body: unknown, expected: { status: number; body: unknown }, key?: string) {
  const r = await t.request(method, path, { body, key });
  expect({ status: r.status, body: r.body }, `${method} ${path} ${JSON.stringify(body)}`).toEqual(expected);
  expect(r.headers.get('content-type')).toBe(JSON_TYPE);
}

function request(overrides: Partial<UsageRequest> = {}): UsageRequest {
  return { workspaceId, apiKeyId, virtualKey: 'openai', model: 'gpt-4o-mini', metadata: {}, ...overrides };
}

beforeAll(async () => {
  t = await createTestApp({}, { clock });
  const workspaces = await t.request('GET', '/v1/admin/workspaces');
  const ws = workspaces.body.data.find((w: { slug: string }) => w.slug === 'default');
  workspaceId = ws.id;
  organisationId = t.app.bootstrapResult.organisationId!;
  teamB = await createWorkspaceWithKey(t, 'Team B');
  const key = await t.request('POST', '/v1/admin/api-keys', { body: { name: 'default ws', type: 'workspace', workspace_id: 'default' } });
  defaultKey = key.body.key;
  apiKeyId = key.body.id;
});
afterAll(() => t.close());

describe('POST and GET /v1/policies/usage-limits/{id}', () => {
  it('creates a policy and returns the whole object', async () => {
    const id = await create({
      name: 'Team budget',
      conditions: [{ key: 'workspace_id', value: 'default' }, { key: 'metadata.team', value: 'search' }],
      group_by: [{ key: 'api_key' }],
      type: 'cost',
      credit_limit: 10,
      alert_threshold: 8,
      periodic_reset: 'monthly',
    });
    const r = await t.request('GET', `${BASE}/${id}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(JSON_TYPE);
    expect(r.body).toEqual({
      id,
      object: 'policy_usage_limits',
      name: 'Team budget',
      type: 'cost',
      status: 'active',
      workspace_id: workspaceId,
      organisation_id: organisationId,
      // The workspace slug in a condition is stored as the workspace id.
      conditions: [
        { key: 'workspace_id', value: workspaceId },
        { key: 'metadata.team', value: 'search' },
      ],
      group_by: [{ key: 'api_key' }],
      credit_limit: 10,
      alert_threshold: 8,
      periodic_reset: 'monthly',
      next_usage_reset_at: '2026-12-01T00:00:00.000Z',
      last_reset_at: null,
      value_key_usage_map: {},
      created_at: T0,
      last_updated_at: T0,
    });
  });

  it('defaults: name, no threshold, no reset, the caller’s workspace; ids are case-insensitive', async () => {
    const id = await create(minimal);
    const r = await t.request('GET', `${BASE}/${id.toUpperCase()}`);
    expect(r.body).toEqual({
      id,
      object: 'policy_usage_limits',
      name: 'Usage limits policy',
      type: 'tokens',
      status: 'active',
      workspace_id: workspaceId,
      organisation_id: organisationId,
      conditions: [{ key: 'workspace_id', value: '*' }],
      group_by: [{ key: 'api_key' }],
      credit_limit: 100,
      alert_threshold: null,
      periodic_reset: null,
      next_usage_reset_at: null,
      last_reset_at: null,
      value_key_usage_map: {},
      created_at: T0,
      last_updated_at: T0,
    });
  });

  it('value_key_usage_map shows the current period’s buckets', async () => {
    const id = await create({ ...minimal, name: 'Per key', conditions: [{ key: 'metadata.app', value: 'usage-map' }], credit_limit: 100, alert_threshold: 50, periodic_reset: 'weekly' });
    const specs = await matchingPolicySpecs(t.app.runtime, t.app.runtime.fork(), organisationId, request({ metadata: { app: 'usage-map' } }));
    const mine = specs.filter((s) => s.ownerId === id);
    expect(mine).toHaveLength(1);
    await usageEngine(t.app.runtime).record(mine, { tokens: 60, cost: 0 });
    const r = await t.request('GET', `${BASE}/${id}`);
    expect(r.body.value_key_usage_map).toEqual({
      [`api_key:${apiKeyId}`]: { current_usage: 60, status: 'active', is_threshold_alerts_sent: true, is_exhausted_alerts_sent: false },
    });
    expect(r.body.next_usage_reset_at).toBe('2026-11-23T00:00:00.000Z');
    await usageEngine(t.app.runtime).record(mine, { tokens: 40, cost: 0 });
    expect((await t.request('GET', `${BASE}/${id}`)).body.value_key_usage_map).toEqual({
      [`api_key:${apiKeyId}`]: { current_usage: 100, status: 'exhausted', is_threshold_alerts_sent: true, is_exhausted_alerts_sent: true },
    });
  });

  it('unknown, malformed or invisible ids: 404 with the same body', async () => {
    const id = await create(minimal);
    const other = await createOtherOrganisation(t);
    await expectError('GET', `${BASE}/${id}`, undefined, NOT_FOUND, other.key);
    await expectError('GET', `${BASE}/00000000-0000-4000-8000-000000000000`, undefined, NOT_FOUND);
    await expectError('GET', `${BASE}/not-a-uuid`, undefined, NOT_FOUND);
    await expectError('PUT', `${BASE}/${id}`, { name: 'x' }, NOT_FOUND, other.key);
    await expectError('DELETE', `${BASE}/${id}`, undefined, NOT_FOUND, other.key);
    // A workspace key does not see another workspace's policy.
    await expectError('GET', `${BASE}/${id}`, undefined, NOT_FOUND, teamB.key);
    expect((await t.request('GET', `${BASE}/${id}`, { key: defaultKey })).status).toBe(200);
  });

  it('a workspace key creates in its own workspace; naming another is a 404', async () => {
    const id = await create(minimal, teamB.key);
    expect((await t.request('GET', `${BASE}/${id}`, { key: teamB.key })).body.workspace_id).toBe(teamB.workspaceId);
    await expectError('POST', BASE, { ...minimal, workspace_id: 'default' }, errorResponse(404, "Workspace not found: 'default'.", 'workspace_id', 'workspace_not_found'), teamB.key);
  });

  it('every invalid body is a 400 naming the parameter', async () => {
    const cases: Array<[unknown, { status: number; body: unknown }]> = [
      [{ ...minimal, conditions: undefined }, errorResponse(400, "Missing required parameter: 'conditions'.", 'conditions', 'missing_required_parameter')],
      [{ ...minimal, conditions: 'x' }, errorResponse(400, "Invalid type for 'conditions': expected an array, but got a string instead.", 'conditions', 'invalid_type')],
      [{ ...minimal, conditions: [] }, errorResponse(400, 'conditions must have at least one item.', 'conditions', 'invalid_value')],
      [
        { ...minimal, conditions: [{ key: 'user', value: 'x' }] },
        errorResponse(400, "Unsupported key 'user'. Allowed keys: workspace_id, api_key, virtual_key, model, metadata.<name>.", 'conditions[0].key', 'invalid_value'),
      ],
      [
        { ...minimal, conditions: [{ key: 'model', value: 'a' }, { key: 'model', value: 'b' }] },
        errorResponse(400, "Duplicate key 'model' in conditions.", 'conditions[1].key', 'invalid_value'),
      ],
      [
        { ...minimal, conditions: [{ key: 'model', value: '' }] },
        errorResponse(400, "conditions[0].value must be a non-empty string (use '*' for any value).", 'conditions[0].value', 'invalid_value'),
      ],
      [
        { ...minimal, conditions: [{ key: 'model', value: 5 }] },
        errorResponse(400, "Invalid type for 'conditions[0].value': expected a string, but got an integer instead.", 'conditions[0].value', 'invalid_type'),
      ],
      [{ ...minimal, conditions: [{ value: 'x' }] }, errorResponse(400, "Missing required parameter: 'conditions[0].key'.", 'conditions[0].key', 'missing_required_parameter')],
      [
        { ...minimal, conditions: [{ key: 'workspace_id', value: teamB.slug }] },
        errorResponse(
          400,
          "conditions[0].value must be '*' or the policy's own workspace ('default'): a policy applies only to requests in its workspace.",
          'conditions[0].value',
          'invalid_value',
        ),
      ],
      [{ ...minimal, group_by: undefined }, errorResponse(400, "Missing required parameter: 'group_by'.", 'group_by', 'missing_required_parameter')],
      [{ ...minimal, group_by: [] }, errorResponse(400, 'group_by must have at least one item.', 'group_by', 'invalid_value')],
      [
        { ...minimal, group_by: [{ key: 'metadata.' }] },
        errorResponse(400, "'metadata.' needs a metadata name after 'metadata.'.", 'group_by[0].key', 'invalid_value'),
      ],
      [{ ...minimal, type: undefined }, errorResponse(400, "Missing required parameter: 'type'.", 'type', 'missing_required_parameter')],
      [{ ...minimal, type: 'dollars' }, errorResponse(400, "Invalid value for 'type': must be one of 'cost', 'tokens'.", 'type', 'invalid_value')],
      [{ ...minimal, credit_limit: undefined }, errorResponse(400, "Missing required parameter: 'credit_limit'.", 'credit_limit', 'missing_required_parameter')],
      [{ ...minimal, credit_limit: '100' }, errorResponse(400, "Invalid type for 'credit_limit': expected a number, but got a string instead.", 'credit_limit', 'invalid_type')],
      [{ ...minimal, credit_limit: -1 }, errorResponse(400, 'credit_limit must be a number greater than or equal to 0.', 'credit_limit', 'invalid_value')],
      [{ ...minimal, name: '' }, errorResponse(400, "'name' must be a non-empty string.", 'name', null)],
      [{ ...minimal, name: 5 }, errorResponse(400, "Invalid type for 'name': expected a string, but got an integer instead.", 'name', 'invalid_type')],
      [{ ...minimal, alert_threshold: 100 }, errorResponse(400, 'alert_threshold must be less than credit_limit.', 'alert_threshold', 'invalid_value')],
      [{ ...minimal, alert_threshold: -1 }, errorResponse(400, 'alert_threshold must be a number greater than or equal to 0.', 'alert_threshold', 'invalid_value')],
      [{ ...minimal, periodic_reset: 'daily' }, errorResponse(400, "Invalid value for 'periodic_reset': must be one of 'monthly', 'weekly'.", 'periodic_reset', 'invalid_value')],
      [{ ...minimal, workspace_id: 'nope' }, errorResponse(404, "Workspace not found: 'nope'.", 'workspace_id', 'workspace_not_found')],
      [{ ...minimal, workspace_id: '' }, errorResponse(400, "'workspace_id' must be a workspace id or slug.", 'workspace_id', 'invalid_value')],
    ];
    for (const [body, expected] of cases) await expectError('POST', BASE, body, expected);
    const malformed = await t.request('POST', BASE, { rawBody: '{', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_json');
  });

  it('a policy named for another workspace by an organisation key lives there', async () => {
    const id = await create({ ...minimal, workspace_id: teamB.slug, conditions: [{ key: 'workspace_id', value: teamB.workspaceId }] });
    const r = await t.request('GET', `${BASE}/${id}`);
    expect(r.body.workspace_id).toBe(teamB.workspaceId);
    expect(r.body.conditions).toEqual([{ key: 'workspace_id', value: teamB.workspaceId }]);
  });

  it('wrong method: 405 with Allow; no key: 401', async () => {
    const r = await t.request('PATCH', `${BASE}/x`);
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('DELETE, GET, PUT');
    const anonymous = await t.request('GET', BASE, { key: null });
    expect(anonymous.status).toBe(401);
  });
});

describe('GET /v1/policies/usage-limits', () => {
  let app: TestApp;
  const listClock = new ManualClock(new Date(T0));
  let ids: string[];
  let ws: string;
  let other: { workspaceId: string; slug: string; key: string };

  beforeAll(async () => {
    // A separate app so the counts here are exact.
    app = await createTestApp({}, { clock: listClock });
    ws = (await app.request('GET', '/v1/admin/workspaces')).body.data[0].id;
    other = await createWorkspaceWithKey(app, 'Other');
    ids = [];
    const specs: Array<[string, Record<string, unknown>]> = [
      ['p0', { type: 'tokens' }],
      ['p1', { type: 'cost' }],
      ['p2', { type: 'tokens' }],
      ['p3', { type: 'cost', workspace_id: 'other' }],
      ['p4', { type: 'tokens' }],
    ];
    for (const [name, extra] of specs) {
      const r = await app.request('POST', BASE, { body: { ...minimal, name, ...extra } });
      expect(r.status, r.text).toBe(200);
      ids.push(r.body.id);
      listClock.advance(1000);
    }
    // Two more at the same instant: the tie is broken by id, descending.
    listClock.advance(1000);
    for (const name of ['t0', 't1']) {
      const r = await app.request('POST', BASE, { body: { ...minimal, name } });
      ids.push(r.body.id);
    }
    expect((await app.request('DELETE', `${BASE}/${ids[2]}`)).body).toEqual({});
  });
  afterAll(() => app.close());

  const names = (body: { data: Array<{ name: string }> }) => body.data.map((p) => p.name);
  const tied = () => ['t0', 't1'].sort((a, b) => (ids[a === 't0' ? 5 : 6] < ids[b === 't0' ? 5 : 6] ? 1 : -1));

  it('defaults: active policies of every visible workspace, newest first, ties by id', async () => {
    const r = await app.request('GET', BASE);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(JSON_TYPE);
    expect(Object.keys(r.body)).toEqual(['object', 'total', 'data']);
    expect(r.body.object).toBe('list');
    expect(r.body.total).toBe(6);
    expect(names(r.body)).toEqual([...tied(), 'p4', 'p3', 'p1', 'p0']);
    // List items have no `object` (the document's UsageLimitsPolicy); the single GET has it.
    expect(r.body.data[2]).toEqual({
      id: ids[4],
      name: 'p4',
      type: 'tokens',
      status: 'active',
      workspace_id: ws,
      organisation_id: expect.any(String),
      conditions: [{ key: 'workspace_id', value: '*' }],
      group_by: [{ key: 'api_key' }],
      credit_limit: 100,
      alert_threshold: null,
      periodic_reset: null,
      next_usage_reset_at: null,
      last_reset_at: null,
      value_key_usage_map: {},
      created_at: '2026-11-22T10:00:04.000Z',
      last_updated_at: '2026-11-22T10:00:04.000Z',
    });
  });

  it('filters: status, type, workspace by id or slug; a workspace key sees its own workspace', async () => {
    expect(names((await app.request('GET', `${BASE}?status=archived`)).body)).toEqual(['p2']);
    expect((await app.request('GET', `${BASE}?status=archived`)).body.data[0].status).toBe('archived');
    expect(names((await app.request('GET', `${BASE}?type=cost`)).body)).toEqual(['p3', 'p1']);
    expect(names((await app.request('GET', `${BASE}?workspace_id=other`)).body)).toEqual(['p3']);
    expect(names((await app.request('GET', `${BASE}?workspace_id=${other.workspaceId}&type=tokens`)).body)).toEqual([]);
    expect((await app.request('GET', `${BASE}?workspace_id=default&type=tokens`)).body.total).toBe(4);
    expect(names((await app.request('GET', BASE, { key: other.key })).body)).toEqual(['p3']);
    expect((await app.request('GET', `${BASE}?workspace_id=default`, { key: other.key })).body).toEqual(
      errorResponse(404, "Workspace not found: 'default'.", 'workspace_id', 'workspace_not_found').body,
    );
  });

  it('paging: page_size and zero-based current_page; 0 gives only the total; unknown parameters are ignored', async () => {
    const page = async (query: string) => (await app.request('GET', `${BASE}?${query}`)).body;
    expect(await page('page_size=0')).toEqual({ object: 'list', data: [], total: 6 });
    expect(names(await page('page_size=2'))).toEqual(tied());
    expect(names(await page('page_size=2&current_page=1'))).toEqual(['p4', 'p3']);
    expect(names(await page('page_size=4&current_page=1'))).toEqual(['p1', 'p0']);
    const beyond = await page('page_size=4&current_page=5');
    expect(beyond).toEqual({ object: 'list', data: [], total: 6 });
    expect(names(await page('page_size=1000&foo=bar'))).toHaveLength(6);
  });

  it('any other parameter value: 400 naming the parameter', async () => {
    const q = (param: string, message: string) => errorResponse(400, `Invalid value for query parameter '${param}': ${message}`, param, 'invalid_value');
    const cases: Array<[string, { status: number; body: unknown }]> = [
      ...BAD_PAGING,
      ['status=deleted', q('status', "must be one of 'active', 'archived'.")],
      ['type=dollars', q('type', "must be one of 'cost', 'tokens'.")],
      // The create body's rule, and GraphQL's (policies-contract.test.ts): one message on every door.
      ['workspace_id=', errorResponse(400, "'workspace_id' must be a workspace id or slug.", 'workspace_id', 'invalid_value')],
      ['workspace_id=nope', errorResponse(404, "Workspace not found: 'nope'.", 'workspace_id', 'workspace_not_found')],
    ];
    for (const [query, expected] of cases) {
      const r = await app.request('GET', `${BASE}?${query}`);
      expect({ status: r.status, body: r.body }, query).toEqual(expected);
    }
  });
});

describe('PUT and DELETE /v1/policies/usage-limits/{id}', () => {
  it('updates name, limits and reset rule; returns {}', async () => {
    const id = await create({ ...minimal, name: 'Before', alert_threshold: 50 });
    clock.advance(60_000);
    const r = await t.request('PUT', `${BASE}/${id}`, { body: { name: 'After', credit_limit: 200, alert_threshold: null, periodic_reset: 'weekly', conditions: [] } });
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: {} });
    const got = (await t.request('GET', `${BASE}/${id}`)).body;
    expect(got).toMatchObject({
      name: 'After',
      credit_limit: 200,
      alert_threshold: null,
      periodic_reset: 'weekly',
      // Unknown keys (conditions) are ignored: PUT does not change them.
      conditions: [{ key: 'workspace_id', value: '*' }],
      next_usage_reset_at: '2026-11-23T00:00:00.000Z',
      // The current week began before the policy existed: no reset has happened yet.
      last_reset_at: null,
      created_at: T0,
      last_updated_at: '2026-11-22T10:01:00.000Z',
    });
    expect((await t.request('PUT', `${BASE}/${id}`, { body: { alert_threshold: 150 } })).status).toBe(200);
    expect((await t.request('GET', `${BASE}/${id}`)).body.alert_threshold).toBe(150);
    expect((await t.request('PUT', `${BASE}/${id}`, { body: { periodic_reset: null } })).status).toBe(200);
    expect((await t.request('GET', `${BASE}/${id}`)).body.periodic_reset).toBeNull();
  });

  it('every invalid update is a 400 naming the parameter, and changes nothing', async () => {
    const id = await create({ ...minimal, alert_threshold: 50 });
    const cases: Array<[unknown, { status: number; body: unknown }]> = [
      [{ credit_limit: 40 }, errorResponse(400, 'alert_threshold must be less than credit_limit.', 'alert_threshold', 'invalid_value')],
      [{ credit_limit: -5 }, errorResponse(400, 'credit_limit must be a number greater than or equal to 0.', 'credit_limit', 'invalid_value')],
      [{ credit_limit: null }, errorResponse(400, "Invalid type for 'credit_limit': expected a number, but got null instead.", 'credit_limit', 'invalid_type')],
      [{ alert_threshold: 'x' }, errorResponse(400, "Invalid type for 'alert_threshold': expected a number, but got a string instead.", 'alert_threshold', 'invalid_type')],
      [{ periodic_reset: 'yearly' }, errorResponse(400, "Invalid value for 'periodic_reset': must be one of 'monthly', 'weekly'.", 'periodic_reset', 'invalid_value')],
      [{ name: '  ' }, errorResponse(400, "'name' must be a non-empty string.", 'name', null)],
      [
        { reset_usage_for_value: '' },
        errorResponse(400, "'reset_usage_for_value' must be a non-empty value key (e.g. 'api_key:<id>').", 'reset_usage_for_value', 'invalid_value'),
      ],
      [{ reset_usage_for_value: 3 }, errorResponse(400, "Invalid type for 'reset_usage_for_value': expected a string, but got an integer instead.", 'reset_usage_for_value', 'invalid_type')],
    ];
    for (const [body, expected] of cases) await expectError('PUT', `${BASE}/${id}`, body, expected);
    expect((await t.request('GET', `${BASE}/${id}`)).body).toMatchObject({ credit_limit: 100, alert_threshold: 50, name: 'Usage limits policy' });
    await expectError('PUT', `${BASE}/00000000-0000-4000-8000-000000000000`, { name: 'x' }, NOT_FOUND);
  });

  it('reset_usage_for_value zeroes one value key and clears its alert flags', async () => {
    const id = await create({ ...minimal, conditions: [{ key: 'metadata.app', value: 'reset' }], group_by: [{ key: 'metadata.user' }], credit_limit: 10, alert_threshold: 5 });
    const engine = usageEngine(t.app.runtime);
    for (const user of ['alice', 'bob']) {
      const specs = await matchingPolicySpecs(t.app.runtime, t.app.runtime.fork(), organisationId, request({ metadata: { app: 'reset', user } }));
      await engine.record(specs, { tokens: 10, cost: 0 });
    }
    const exhausted = { current_usage: 10, status: 'exhausted', is_threshold_alerts_sent: true, is_exhausted_alerts_sent: true };
    expect((await t.request('GET', `${BASE}/${id}`)).body.value_key_usage_map).toEqual({ 'metadata.user:alice': exhausted, 'metadata.user:bob': exhausted });
    clock.advance(1000);
    expect((await t.request('PUT', `${BASE}/${id}`, { body: { reset_usage_for_value: 'metadata.user:alice' } })).body).toEqual({});
    const got = (await t.request('GET', `${BASE}/${id}`)).body;
    expect(got.value_key_usage_map).toEqual({
      'metadata.user:alice': { current_usage: 0, status: 'active', is_threshold_alerts_sent: false, is_exhausted_alerts_sent: false },
      'metadata.user:bob': exhausted,
    });
    expect(got.last_reset_at).toBe(clock.now().toISOString());
    // A value key never seen is a no-op, not an error.
    expect((await t.request('PUT', `${BASE}/${id}`, { body: { reset_usage_for_value: 'metadata.user:carol' } })).status).toBe(200);
  });

  it('the data path sees every write at once: its cached lookup is dropped on create and update', async () => {
    const req = request({ metadata: { app: 'cached' } });
    // Only the limits of policies on metadata.app (others, on workspace_id '*', match as well).
    const specs = async () =>
      (await matchingPolicySpecs(t.app.runtime, t.app.runtime.fork(), organisationId, req)).filter((s) => s.valueKey.startsWith('metadata.app')).map((s) => [s.ownerId, s.creditLimit]);
    expect(await specs()).toEqual([]);
    const id = await create({ ...minimal, conditions: [{ key: 'metadata.app', value: 'cached' }], group_by: [{ key: 'metadata.app' }] });
    expect(await specs()).toEqual([[id, minimal.credit_limit]]);
    expect((await t.request('PUT', `${BASE}/${id}`, { body: { credit_limit: 77 } })).status).toBe(200);
    expect(await specs()).toEqual([[id, 77]]);
  });

  it('DELETE archives (idempotent); an archived policy no longer applies and cannot be changed', async () => {
    const id = await create({ ...minimal, conditions: [{ key: 'metadata.app', value: 'archive' }] });
    const req = request({ metadata: { app: 'archive' } });
    expect((await matchingPolicySpecs(t.app.runtime, t.app.runtime.fork(), organisationId, req)).map((s) => s.ownerId)).toContain(id);
    clock.advance(1000);
    const r = await t.request('DELETE', `${BASE}/${id}`, { body: {} });
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: {} });
    const got = (await t.request('GET', `${BASE}/${id}`)).body;
    expect(got).toMatchObject({ status: 'archived', last_updated_at: clock.now().toISOString() });
    expect((await matchingPolicySpecs(t.app.runtime, t.app.runtime.fork(), organisationId, req)).map((s) => s.ownerId)).not.toContain(id);
    expect((await t.request('DELETE', `${BASE}/${id}`)).body).toEqual({});
    await expectError('PUT', `${BASE}/${id}`, { name: 'x' }, errorResponse(400, 'Archived usage limits policies cannot be changed.', null, 'policy_archived'));
    await expectError('DELETE', `${BASE}/00000000-0000-4000-8000-000000000000`, undefined, NOT_FOUND);
  });
});
