/**
 * The policy term index finds exactly the policies `matches` accepts (generated conditions and
 * requests), ignores archived ones, and indexes policies written before it existed.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeSql } from '../../../src/db/sql.js';
import { uuid } from '../../../src/lib/ids.js';
import { findMatchingPolicies, indexPolicy, indexUnindexedPolicies } from '../../../src/modules/policies/policy-index.js';
import { UsageLimitsPolicySchema } from '../../../src/modules/policies/usage-limits-policy.entity.js';
import { matches, WILDCARD, type Condition, type UsageRequest } from '../../../src/modules/usage/conditions.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
let organisationId: string;
let workspaceId: string;

beforeAll(async () => {
  t = await createTestApp();
  const viewer = await t.graphql('{ viewer { organisation { id } workspaces { id slug } } }');
  organisationId = viewer.data.viewer.organisation.id;
  workspaceId = viewer.data.viewer.workspaces.find((w: { slug: string }) => w.slug === 'default').id;
});
afterAll(() => t.close());

/** Writes a policy (indexed unless told otherwise) straight to the database; returns its id. */
async function insertPolicy(conditions: Condition[], options: { indexed?: boolean; status?: 'active' | 'archived' } = {}): Promise<string> {
  const em = t.app.runtime.fork();
  const now = new Date();
  const policy = em.create(UsageLimitsPolicySchema, {
    id: uuid(), organisationId, workspaceId, name: 'p', type: 'tokens', status: options.status ?? 'active', conditions, groupBy: [{ key: 'api_key' }],
    creditLimit: 10, alertThreshold: null, periodicReset: null, lastResetAt: null, createdAt: now, updatedAt: now,
  });
  if (options.indexed !== false) indexPolicy(em, policy);
  await em.flush();
  return policy.id;
}

async function clear(): Promise<void> {
  const em = t.app.runtime.fork();
  await executeSql(em, 'delete from usage_policy_terms', [], 'run');
  await executeSql(em, 'delete from usage_limits_policies', [], 'run');
}

const value = fc.constantFrom('a', 'b', WILDCARD);
const conditionsArb = fc.uniqueArray(
  fc.record({ key: fc.constantFrom('api_key', 'model', 'virtual_key', 'workspace_id', 'metadata.user', 'metadata.app'), value }),
  { selector: (c) => c.key, minLength: 1, maxLength: 4 },
);
const requestArb = fc.record({
  apiKeyId: fc.constantFrom('a', 'b'),
  model: fc.constantFrom('a', 'b'),
  virtualKey: fc.constantFrom('a', 'b'),
  metadata: fc.dictionary(fc.constantFrom('user', 'app', 'other'), fc.constantFrom('a', 'b')),
});

describe('policy term index', () => {
  it('finds the same policies as matches(), for generated policies and requests', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(conditionsArb, { minLength: 1, maxLength: 8 }), fc.array(requestArb, { minLength: 1, maxLength: 5 }), async (policies, requests) => {
        await clear();
        const ids = new Map<string, Condition[]>();
        for (const conditions of policies) ids.set(await insertPolicy(conditions), conditions);
        for (const r of requests) {
          const req: UsageRequest = { workspaceId, ...r };
          const expected = [...ids].filter(([, conditions]) => matches(conditions, req)).map(([id]) => id).sort();
          const found = (await findMatchingPolicies(t.app.runtime.fork(), organisationId, req)).map((p) => p.id).sort();
          expect(found).toEqual(expected);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('skips archived policies and other workspaces', async () => {
    await clear();
    // Both match every request of their workspace by their conditions: only status and workspace tell them apart.
    await insertPolicy([{ key: 'api_key', value: WILDCARD }], { status: 'archived' });
    const active = await insertPolicy([{ key: 'api_key', value: WILDCARD }]);
    const req: UsageRequest = { workspaceId, apiKeyId: 'k', model: 'm', virtualKey: 'v', metadata: {} };
    expect((await findMatchingPolicies(t.app.runtime.fork(), organisationId, req)).map((p) => p.id)).toEqual([active]);
    expect(await findMatchingPolicies(t.app.runtime.fork(), organisationId, { ...req, workspaceId: uuid() })).toEqual([]);
  });

  it('indexes active policies written before the index, once', async () => {
    await clear();
    const old = await insertPolicy([{ key: 'model', value: 'gpt' }], { indexed: false });
    await insertPolicy([{ key: 'model', value: 'other' }], { indexed: false, status: 'archived' });
    const req: UsageRequest = { workspaceId, apiKeyId: 'k', model: 'gpt', virtualKey: 'v', metadata: {} };
    expect(await findMatchingPolicies(t.app.runtime.fork(), organisationId, req)).toEqual([]);
    expect(await indexUnindexedPolicies(t.app.runtime.fork())).toBe(1);
    expect(await indexUnindexedPolicies(t.app.runtime.fork())).toBe(0);
    expect((await findMatchingPolicies(t.app.runtime.fork(), organisationId, req)).map((p) => p.id)).toEqual([old]);
  });
});
