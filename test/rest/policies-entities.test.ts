import OpenAI, { APIError } from 'openai';
import { Portkey } from 'portkey-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';
import { expectBothDoors } from '../helpers/both-doors.js';
import { errorResponse } from '../helpers/errors.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';

/*
 * A usage-limits policy's entities (`GET /v1/policies/usage-limits/{id}/entities`) and their reset
 * (`PUT …/entities/{entityId}/reset`), after real chat traffic over HTTP (openai SDK, local
 * provider): one entity per group_by value with its exact usage, and a reset that re-admits one
 * entity while the others keep theirs. The portkey-ai SDK has no methods for these routes; its
 * generic get/put helpers call them as a Portkey client would.
 */

const T0 = '2026-11-22T10:00:00.000Z';
const BASE = '/v1/policies/usage-limits';
const clock = new ManualClock(new Date(T0));

let t: TestApp;
let baseURL: string;
let portkey: Portkey;
let teamB: { workspaceId: string; slug: string; key: string };
let other: { key: string };

beforeAll(async () => {
  t = await createTestApp({}, { clock });
  const origin = await t.listen();
  baseURL = `${origin}/v1`;
  portkey = new Portkey({ apiKey: t.key, baseURL });
  teamB = await createWorkspaceWithKey(t, 'Team B');
  other = await createOtherOrganisation(t);
});
afterAll(() => t.close());

const plain = (value: unknown): any => JSON.parse(JSON.stringify(value));

async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const r = await t.request(method, path, { body });
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(200);
  return r.body;
}

/** Policies of the running describe: archived after it, so that no other describe's traffic meets them. */
const created: string[] = [];

async function createPolicy(groupBy: string, creditLimit: number, extra: Record<string, unknown> = {}): Promise<string> {
  const body = { conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: groupBy }], type: 'tokens', credit_limit: creditLimit, ...extra };
  const id = (await ok('POST', BASE, body)).id;
  created.push(id);
  return id;
}

/** Archives the policies created so far: the next describe's traffic meets only its own. */
async function archiveAll(): Promise<void> {
  for (const id of created.splice(0)) await ok('DELETE', `${BASE}/${id}`);
}

/** One chat completion through the local provider; its counted tokens, or its 412. */
async function chat(user: string | null, key = TEST_KEY): Promise<number | APIError> {
  const client = new OpenAI({ apiKey: key, baseURL, maxRetries: 0 });
  try {
    const answer = await client.chat.completions.create({
      model: '@local/local',
      messages: [{ role: 'user', content: `hello from ${user ?? 'nobody'}` }],
      ...(user ? { metadata: { user } } : {}),
    });
    return answer.usage!.total_tokens;
  } catch (error) {
    if (error instanceof APIError && error.status === 412) return error;
    throw error;
  }
}

async function tokens(user: string | null, key = TEST_KEY): Promise<number> {
  const used = await chat(user, key);
  if (typeof used !== 'number') throw new Error(`refused: ${used.status} ${used.message}`);
  return used;
}

/** Every reservation settled (chat settles right after answering). */
async function settled(): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const rows = await t.app.runtime.fork().getConnection().execute<Array<{ held: number | null }>>('select sum(reserved) as held from usage_buckets', [], 'all');
    if (Number(rows[0]?.held ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('reservations still held');
}

const entity = (valueKey: string, currentUsage: number, status: 'active' | 'exhausted', creditLimit: number, periodKey = '2026-11') => ({
  id: valueKey,
  value_key: valueKey,
  current_usage: currentUsage,
  credit_limit: creditLimit,
  period_key: periodKey,
  status,
});

const entityPath = (policyId: string, valueKey: string) => `${BASE}/${policyId}/entities/${encodeURIComponent(valueKey)}/reset`;

describe('a policy grouped by metadata.user', () => {
  afterAll(archiveAll);
  let policyId: string;
  const used = { alice: 0, bob: 0, carol: 0 };
  const LIMIT = 40;

  beforeAll(async () => {
    policyId = await createPolicy('metadata.user', LIMIT, { periodic_reset: 'monthly' });
    used.alice += await tokens('alice');
    used.alice += await tokens('alice');
    used.bob += await tokens('bob');
    // Carol spends until she is refused.
    for (let i = 0; i < 50; i++) {
      const result = await chat('carol');
      if (typeof result !== 'number') {
        expect(result.status).toBe(412);
        break;
      }
      used.carol += result;
    }
    await settled();
    expect(used.carol).toBeGreaterThanOrEqual(LIMIT);
    expect(used.alice).toBeLessThan(LIMIT);
  });

  it('lists one entity per value with its exact usage, ordered by value key', async () => {
    expect(await ok('GET', `${BASE}/${policyId}/entities`)).toEqual({
      object: 'list',
      total: 3,
      data: [
        entity('metadata.user:alice', used.alice, 'active', LIMIT),
        entity('metadata.user:bob', used.bob, 'active', LIMIT),
        entity('metadata.user:carol', used.carol, 'exhausted', LIMIT),
      ],
    });
  });

  it('filters by status and by a case-insensitive search; pages with page_size and current_page', async () => {
    const list = async (query: string) => (await ok('GET', `${BASE}/${policyId}/entities?${query}`)) as { total: number; data: Array<{ id: string }> };
    const ids = async (query: string) => {
      const page = await list(query);
      return { total: page.total, ids: page.data.map((e) => e.id) };
    };
    expect(await ids('status=exhausted')).toEqual({ total: 1, ids: ['metadata.user:carol'] });
    expect(await ids('status=active')).toEqual({ total: 2, ids: ['metadata.user:alice', 'metadata.user:bob'] });
    expect(await ids('search=BO')).toEqual({ total: 1, ids: ['metadata.user:bob'] });
    // A LIKE wildcard in the search is plain text.
    expect(await ids('search=%25')).toEqual({ total: 0, ids: [] });
    expect(await ids('search=user&status=active&page_size=1&current_page=1')).toEqual({ total: 2, ids: ['metadata.user:bob'] });
    expect(await ids('page_size=0')).toEqual({ total: 3, ids: [] });
    expect(await ids('page_size=2&current_page=5')).toEqual({ total: 3, ids: [] });
  });

  it("reset zeroes one entity: its next request is admitted again, the others keep their usage (portkey-ai's generic helpers)", async () => {
    expect(await chat('carol')).toMatchObject({ status: 412 });
    expect(plain(await portkey.put(`/policies/usage-limits/${policyId}/entities/${encodeURIComponent('metadata.user:carol')}/reset`, {} as any))).toEqual({});
    const again = await tokens('carol');
    await settled();
    expect(plain(await portkey.get(`/policies/usage-limits/${policyId}/entities`))).toEqual({
      object: 'list',
      total: 3,
      data: [
        entity('metadata.user:alice', used.alice, 'active', LIMIT),
        entity('metadata.user:bob', used.bob, 'active', LIMIT),
        entity('metadata.user:carol', again, 'active', LIMIT),
      ],
    });
    // The reset is the policy's latest reset, as reset_usage_for_value's is.
    expect((await ok('GET', `${BASE}/${policyId}`)).last_reset_at).toBe(T0);
  });

  it('GraphQL: the same entities on the policy, and the reset mutation answers the zeroed entity', async () => {
    const q = await t.graphql(
      `query($id: ID!) { usageLimitsPolicy(id: $id) { entities(search: "alice") { total data { id valueKey currentUsage creditLimit periodKey status isThresholdAlertsSent isExhaustedAlertsSent } } } }`,
      { id: policyId },
    );
    expect(q.errors).toBeUndefined();
    expect(q.data.usageLimitsPolicy.entities).toEqual({
      total: 1,
      data: [{ id: 'metadata.user:alice', valueKey: 'metadata.user:alice', currentUsage: used.alice, creditLimit: LIMIT, periodKey: '2026-11', status: 'active', isThresholdAlertsSent: false, isExhaustedAlertsSent: false }],
    });
    const m = await t.graphql(`mutation($p: ID!, $e: ID!) { resetUsageLimitsPolicyEntity(policyId: $p, entityId: $e) { id currentUsage status } }`, {
      p: policyId,
      e: 'metadata.user:bob',
    });
    expect(m.errors).toBeUndefined();
    expect(m.data.resetUsageLimitsPolicyEntity).toEqual({ id: 'metadata.user:bob', currentUsage: 0, status: 'active' });
    used.bob = 0;
  });

  it('a new period: every entity stays listed, at zero in the new period', async () => {
    clock.set(new Date('2026-12-01T00:00:00.000Z'));
    try {
      const page = await ok('GET', `${BASE}/${policyId}/entities`);
      expect(page).toEqual({
        object: 'list',
        total: 3,
        data: ['alice', 'bob', 'carol'].map((u) => entity(`metadata.user:${u}`, 0, 'active', LIMIT, '2026-12')),
      });
      // An entity known only from an earlier period resets without error (nothing to zero).
      expect(await ok('PUT', entityPath(policyId, 'metadata.user:alice'))).toEqual({});
    } finally {
      clock.set(new Date(T0));
    }
  });
});

describe('a policy grouped by api_key', () => {
  afterAll(archiveAll);
  it('one entity per API key with its exact usage; a reset leaves the other key exhausted', async () => {
    const policyId = await createPolicy('api_key', 25);
    const second = await ok('POST', '/v1/admin/api-keys', { name: 'second', type: 'workspace', workspace_id: 'default' });
    const first = (await ok('GET', '/v1/admin/api-keys')).data.find((k: { name: string; type: string }) => k.type === 'organisation');
    let firstUsed = 0;
    let secondUsed = 0;
    for (let i = 0; i < 50; i++) {
      const r = await chat(null);
      if (typeof r !== 'number') break;
      firstUsed += r;
    }
    for (let i = 0; i < 50; i++) {
      const r = await chat(null, second.key);
      if (typeof r !== 'number') break;
      secondUsed += r;
    }
    await settled();
    const keys = [`api_key:${first.id}`, `api_key:${second.id}`].sort();
    const usage: Record<string, number> = { [`api_key:${first.id}`]: firstUsed, [`api_key:${second.id}`]: secondUsed };
    expect(await ok('GET', `${BASE}/${policyId}/entities`)).toEqual({
      object: 'list',
      total: 2,
      data: keys.map((k) => entity(k, usage[k], 'exhausted', 25, 'all')),
    });

    expect(await ok('PUT', entityPath(policyId, `api_key:${second.id}`))).toEqual({});
    expect(typeof (await chat(null, second.key))).toBe('number');
    expect(await chat(null)).toMatchObject({ status: 412 });
    await settled();
    const after = await ok('GET', `${BASE}/${policyId}/entities?status=exhausted`);
    expect(after).toEqual({ object: 'list', total: 1, data: [entity(`api_key:${first.id}`, firstUsed, 'exhausted', 25, 'all')] });
  });
});

describe('tenancy and errors', () => {
  afterAll(archiveAll);
  let policyId: string;

  beforeAll(async () => {
    policyId = await createPolicy('metadata.user', 1000);
    await tokens('dave');
    await settled();
  });

  it('a workspace key of the policy’s workspace sees and resets its entities; another workspace’s key or another organisation’s: 404', async () => {
    const ownKey = (await ok('POST', '/v1/admin/api-keys', { name: 'default ws', type: 'workspace', workspace_id: 'default' })).key;
    const own = await t.request('GET', `${BASE}/${policyId}/entities`, { key: ownKey });
    expect({ status: own.status, total: own.body.total }).toEqual({ status: 200, total: 1 });
    expect((await t.request('PUT', entityPath(policyId, 'metadata.user:dave'), { key: ownKey })).status).toBe(200);

    const notFound = errorResponse(404, 'Usage limits policy not found.', 'id', 'policy_not_found');
    for (const key of [teamB.key, other.key]) {
      for (const [method, path] of [
        ['GET', `${BASE}/${policyId}/entities`],
        ['PUT', entityPath(policyId, 'metadata.user:dave')],
      ] as const) {
        const r = await t.request(method, path, { key });
        expect({ status: r.status, body: r.body }, `${method} ${path}`).toEqual(notFound);
      }
    }
  });

  it('unknown or malformed policy ids and unknown entities: 404 in the envelope', async () => {
    const policyNotFound = errorResponse(404, 'Usage limits policy not found.', 'id', 'policy_not_found');
    for (const [method, path] of [
      ['GET', `${BASE}/00000000-0000-4000-8000-000000000000/entities`],
      ['GET', `${BASE}/not-a-uuid/entities`],
      ['PUT', entityPath('00000000-0000-4000-8000-000000000000', 'metadata.user:dave')],
      ['PUT', entityPath('not-a-uuid', 'metadata.user:dave')],
    ] as const) {
      const r = await t.request(method, path);
      expect({ status: r.status, body: r.body }, `${method} ${path}`).toEqual(policyNotFound);
    }
    for (const entityId of ['metadata.user:nobody', 'metadata.user', 'api_key:dave']) {
      const r = await t.request('PUT', entityPath(policyId, entityId));
      expect({ status: r.status, body: r.body }, entityId).toEqual(errorResponse(404, 'Usage limits policy entity not found.', 'entity_id', 'policy_entity_not_found'));
    }
  });

  it('an archived policy lists its entities but cannot reset them', async () => {
    const archived = await createPolicy('metadata.user', 1000);
    await tokens('erin');
    await settled();
    await ok('DELETE', `${BASE}/${archived}`);
    expect((await ok('GET', `${BASE}/${archived}/entities`)).total).toBe(1);
    const r = await t.request('PUT', entityPath(archived, 'metadata.user:erin'));
    expect({ status: r.status, body: r.body }).toEqual(errorResponse(400, 'Archived usage limits policies cannot be changed.', null, 'policy_archived'));
  });

  it('bad paging is refused identically by both doors; a bad status names the query parameter; wrong method: 405', async () => {
    const query = `query($id: ID!, $s: Int, $p: Int) { usageLimitsPolicy(id: $id) { entities(pageSize: $s, currentPage: $p) { total } } }`;
    await expectBothDoors(
      t.request('GET', `${BASE}/${policyId}/entities?page_size=1001`),
      t.graphql(query, { id: policyId, s: 1001 }),
      "Invalid value for 'page_size': expected an integer from 0 to 1000.",
      'page_size',
      'invalid_value',
    );
    await expectBothDoors(
      t.request('GET', `${BASE}/${policyId}/entities?current_page=-1`),
      t.graphql(query, { id: policyId, p: -1 }),
      "Invalid value for 'current_page': expected an integer greater than or equal to 0.",
      'current_page',
      'invalid_value',
    );
    const status = await t.request('GET', `${BASE}/${policyId}/entities?status=spent`);
    expect({ status: status.status, body: status.body }).toEqual(
      errorResponse(400, "Invalid value for query parameter 'status': must be one of 'active', 'exhausted'.", 'status', 'invalid_value'),
    );
    const wrong = await t.request('POST', `${BASE}/${policyId}/entities`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
  });
});
