import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { matchingPolicySpecs } from '../../src/modules/policies/policies.service.js';
import { usageAlertsTopic, usageEngine } from '../../src/modules/usage/usage-engine.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';

/*
 * The policies domain over GraphQL: the same service as REST, typed fields (valueKeyUsage is a
 * list; REST turns it into value_key_usage_map), errors with status and param in extensions,
 * batched usage reads, and the usageAlerts subscription.
 */

const T0 = '2026-11-22T10:00:00.000Z';
const clock = new ManualClock(new Date(T0));
let t: TestApp;
let statements: string[] = [];
let workspaceId: string;
let organisationId: string;

beforeAll(async () => {
  t = await createTestApp({}, { clock, onQuery: (sql) => statements.push(sql) });
  const viewer = await t.graphql('{ viewer { organisation { id } workspaces { id slug } } }');
  organisationId = viewer.data.viewer.organisation.id;
  workspaceId = viewer.data.viewer.workspaces.find((w: { slug: string }) => w.slug === 'default').id;
});
afterAll(() => t.close());

const POLICY_FIELDS = `id name type status workspaceId organisationId conditions { key value } groupBy { key } creditLimit alertThreshold
  periodicReset nextUsageResetAt lastResetAt valueKeyUsage { valueKey currentUsage status isThresholdAlertsSent isExhaustedAlertsSent }
  createdAt lastUpdatedAt`;

async function ok<T = any>(query: string, variables: Record<string, unknown> = {}, key?: string): Promise<T> {
  const g = await t.graphql(query, variables, key);
  expect(g.errors, JSON.stringify(g.errors)).toBeUndefined();
  return g.data;
}

async function fails(query: string, variables: Record<string, unknown> = {}, key?: string) {
  const g = await t.graphql(query, variables, key);
  expect(g.errors, JSON.stringify(g.body)).toBeDefined();
  const [error] = g.errors!;
  return { message: error.message, status: error.extensions.status, param: error.extensions.param, code: error.extensions.code };
}

const CREATE = `mutation($input: CreateUsageLimitsPolicyInput!) { createUsageLimitsPolicy(input: $input) { ${POLICY_FIELDS} } }`;
const input = (extra: Record<string, unknown> = {}) => ({
  type: 'tokens',
  conditions: [{ key: 'metadata.app', value: 'gql' }],
  groupBy: [{ key: 'api_key' }],
  creditLimit: 100,
  ...extra,
});

describe('queries and mutations', () => {
  it('createUsageLimitsPolicy returns the whole policy; usageLimitsPolicy reads it back', async () => {
    const created = (await ok(CREATE, { input: input({ name: 'GQL', alertThreshold: 50, periodicReset: 'monthly' }) })).createUsageLimitsPolicy;
    expect(created).toEqual({
      id: expect.any(String),
      name: 'GQL',
      type: 'tokens',
      status: 'active',
      workspaceId,
      organisationId,
      conditions: [{ key: 'metadata.app', value: 'gql' }],
      groupBy: [{ key: 'api_key' }],
      creditLimit: 100,
      alertThreshold: 50,
      periodicReset: 'monthly',
      nextUsageResetAt: '2026-12-01T00:00:00.000Z',
      lastResetAt: null,
      valueKeyUsage: [],
      createdAt: T0,
      lastUpdatedAt: T0,
    });
    const read = await ok(`query($id: ID!) { usageLimitsPolicy(id: $id) { ${POLICY_FIELDS} } }`, { id: created.id });
    expect(read.usageLimitsPolicy).toEqual(created);
  });

  it('updateUsageLimitsPolicy and archiveUsageLimitsPolicy', async () => {
    const { id } = (await ok(CREATE, { input: input() })).createUsageLimitsPolicy;
    clock.advance(1000);
    const updated = await ok(
      'mutation($id: ID!, $input: UpdateUsageLimitsPolicyInput!) { updateUsageLimitsPolicy(id: $id, input: $input) { name creditLimit alertThreshold periodicReset lastUpdatedAt } }',
      { id, input: { name: 'Renamed', creditLimit: 200, alertThreshold: 150, periodicReset: 'weekly' } },
    );
    expect(updated.updateUsageLimitsPolicy).toEqual({ name: 'Renamed', creditLimit: 200, alertThreshold: 150, periodicReset: 'weekly', lastUpdatedAt: '2026-11-22T10:00:01.000Z' });
    const cleared = await ok('mutation($id: ID!) { updateUsageLimitsPolicy(id: $id, input: { alertThreshold: null }) { alertThreshold creditLimit } }', { id });
    expect(cleared.updateUsageLimitsPolicy).toEqual({ alertThreshold: null, creditLimit: 200 });
    const archived = await ok('mutation($id: ID!) { archiveUsageLimitsPolicy(id: $id) { status } }', { id });
    expect(archived.archiveUsageLimitsPolicy).toEqual({ status: 'archived' });
  });

  it('usageLimitsPolicies filters and pages like REST, with the true total', async () => {
    const all = await ok('{ usageLimitsPolicies(pageSize: 0) { total data { id } } }');
    expect(all.usageLimitsPolicies.data).toEqual([]);
    const active = all.usageLimitsPolicies.total;
    expect(active).toBeGreaterThan(0);
    const archived = await ok('{ usageLimitsPolicies(status: archived) { total data { status } } }');
    expect(archived.usageLimitsPolicies.data.every((p: { status: string }) => p.status === 'archived')).toBe(true);
    const page = await ok('{ usageLimitsPolicies(workspaceId: "default", type: tokens, pageSize: 1, currentPage: 0) { total data { type } } }');
    expect(page.usageLimitsPolicies).toEqual({ total: active, data: [{ type: 'tokens' }] });
    const cost = await ok('{ usageLimitsPolicies(type: cost) { total } }');
    expect(cost.usageLimitsPolicies.total).toBe(0);
  });

  it('errors carry status, param and code', async () => {
    expect(await fails('{ usageLimitsPolicies(pageSize: -1) { total } }')).toEqual({
      message: "Invalid value for 'page_size': expected an integer from 0 to 1000.",
      status: 400,
      param: 'page_size',
      code: 'invalid_value',
    });
    expect(await fails('{ usageLimitsPolicies(pageSize: 1001) { total } }')).toMatchObject({ status: 400, param: 'page_size' });
    expect(await fails('{ usageLimitsPolicies(currentPage: -1) { total } }')).toMatchObject({ status: 400, param: 'current_page' });
    expect(await fails('{ usageLimitsPolicies(workspaceId: "nope") { total } }')).toEqual({
      message: "Workspace not found: 'nope'.",
      status: 404,
      param: 'workspace_id',
      code: 'workspace_not_found',
    });
    expect(await fails('{ usageLimitsPolicy(id: "00000000-0000-4000-8000-000000000000") { id } }')).toEqual({
      message: 'Usage limits policy not found.',
      status: 404,
      param: 'id',
      code: 'policy_not_found',
    });
    expect(await fails(CREATE, { input: input({ conditions: [] }) })).toEqual({
      message: 'conditions must have at least one item.',
      status: 400,
      param: 'conditions',
      code: 'invalid_value',
    });
    expect(await fails(CREATE, { input: input({ groupBy: [{ key: 'team' }] }) })).toMatchObject({ status: 400, param: 'group_by[0].key' });
    expect(await fails(CREATE, { input: input({ creditLimit: 10, alertThreshold: 10 }) })).toMatchObject({ status: 400, param: 'alert_threshold' });
    expect(await fails(CREATE, { input: input({ workspaceId: '' }) })).toMatchObject({ status: 400, param: 'workspace_id' });
  });

  it('tenancy: another organisation sees nothing; a workspace key only its workspace', async () => {
    const { id } = (await ok(CREATE, { input: input() })).createUsageLimitsPolicy;
    const other = await createOtherOrganisation(t);
    expect(await fails('query($id: ID!) { usageLimitsPolicy(id: $id) { id } }', { id }, other.key)).toMatchObject({ status: 404, code: 'policy_not_found' });
    expect((await ok('{ usageLimitsPolicies { total } }', {}, other.key)).usageLimitsPolicies.total).toBe(0);
    const teamC = await createWorkspaceWithKey(t, 'Team C');
    expect(await fails('query($id: ID!) { usageLimitsPolicy(id: $id) { id } }', { id }, teamC.key)).toMatchObject({ status: 404 });
    expect(await fails('mutation($id: ID!) { archiveUsageLimitsPolicy(id: $id) { id } }', { id }, teamC.key)).toMatchObject({ status: 404 });
    expect((await ok('{ usageLimitsPolicies { total } }', {}, teamC.key)).usageLimitsPolicies.total).toBe(0);
  });
});

describe('batching', () => {
  it('valueKeyUsage of a whole page costs one usage query, whatever the page size', async () => {
    const engine = usageEngine(t.app.runtime);
    for (let i = 0; i < 30; i++) {
      await ok(CREATE, { input: input({ name: `batch ${i}`, conditions: [{ key: 'metadata.batch', value: 'yes' }], periodicReset: i % 2 ? 'weekly' : null }) });
    }
    const specs = await matchingPolicySpecs(t.app.runtime, t.app.runtime.fork(), organisationId, {
      workspaceId,
      apiKeyId: 'k1',
      virtualKey: 'openai',
      model: 'gpt-4o',
      metadata: { batch: 'yes' },
    });
    expect(specs).toHaveLength(30);
    await engine.record(specs, { tokens: 3, cost: 0 });
    const count = async (pageSize: number) => {
      statements = [];
      const data = await ok(`{ usageLimitsPolicies(pageSize: ${pageSize}) { data { name valueKeyUsage { valueKey currentUsage } } } }`);
      return { usageQueries: statements.filter((s) => /from [`"]?usage_buckets/i.test(s)).length, data: data.usageLimitsPolicies.data };
    };
    const small = await count(2);
    const big = await count(30);
    expect(small.usageQueries).toBe(1);
    expect(big.usageQueries).toBe(1);
    expect(big.data.filter((p: { name: string }) => p.name.startsWith('batch')).every((p: any) => p.valueKeyUsage[0]?.currentUsage === 3)).toBe(true);
  });
});

describe('usageAlerts subscription', () => {
  it('delivers the alerts of the workspace’s limits over graphql-sse', async () => {
    const base = await t.listen();
    const { id } = (await ok(CREATE, { input: input({ name: 'Alerting', conditions: [{ key: 'metadata.app', value: 'alerts' }], creditLimit: 10, alertThreshold: 5 }) }))
      .createUsageLimitsPolicy;
    const client = createClient({ url: `${base}/graphql/stream`, headers: { 'x-gateway-api-key': t.key }, retryAttempts: 0 });
    const iterator = client.iterate({
      query: 'subscription { usageAlerts(workspaceId: "default") { kind ownerType ownerId label valueKey periodKey type currentUsage creditLimit alertThreshold workspaceId message createdAt } }',
    });
    const first = iterator.next();
    for (let i = 0; i < 100 && t.app.runtime.pubsub.listenerCount(usageAlertsTopic(workspaceId)) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const specs = await matchingPolicySpecs(t.app.runtime, t.app.runtime.fork(), organisationId, {
      workspaceId,
      apiKeyId: 'k-alerts',
      virtualKey: 'openai',
      model: 'gpt-4o',
      metadata: { app: 'alerts' },
    });
    await usageEngine(t.app.runtime).record(specs, { tokens: 6, cost: 0 });
    expect((await first).value).toEqual({
      data: {
        usageAlerts: {
          kind: 'threshold',
          ownerType: 'policy',
          ownerId: id,
          label: `usage-limit policy 'Alerting' (${id})`,
          valueKey: 'api_key:k-alerts',
          periodKey: 'all',
          type: 'tokens',
          currentUsage: 6,
          creditLimit: 10,
          alertThreshold: 5,
          workspaceId,
          message: `Usage alert: usage-limit policy 'Alerting' (${id}) passed its alert threshold of 5 tokens for 'api_key:k-alerts': 6 tokens of 10 tokens used.`,
          createdAt: clock.now().toISOString(),
        },
      },
    });
    await iterator.return?.();
    client.dispose();
  });

  it('another organisation cannot subscribe to this workspace', async () => {
    const other = await createOtherOrganisation(t, 'Snoop');
    const g = await t.graphql(`subscription { usageAlerts(workspaceId: "${workspaceId}") { kind } }`, {}, other.key);
    expect(g.errors?.[0]).toMatchObject({ message: `Workspace not found: '${workspaceId}'.`, extensions: { status: 404, param: 'workspace_id' } });
  });
});
