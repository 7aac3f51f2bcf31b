/**
 * The index of active policies by their terms (conditions.ts `policyTerms`), so a request's
 * matching policies are found by looking up the request's own terms, whatever the number of
 * policies that do not concern it.
 */
import type { EntityManager } from '@mikro-orm/core';
import { executeSql } from '../../db/sql.js';
import { configCache } from '../../lib/config-cache.js';
import type { Runtime } from '../../runtime.js';
import { policyTerms, requestTerms, type UsageRequest } from '../usage/conditions.js';
import { PolicyTermSchema } from './policy-term.entity.js';
import { UsageLimitsPolicySchema, type UsageLimitsPolicy } from './usage-limits-policy.entity.js';

/** Adds the policy's terms to `em`'s unit of work (written with the policy by the same flush). */
export function indexPolicy(em: EntityManager, policy: Pick<UsageLimitsPolicy, 'id' | 'workspaceId' | 'conditions'>): void {
  const terms = policyTerms(policy.conditions);
  for (const term of terms) em.create(PolicyTermSchema, { policyId: policy.id, workspaceId: policy.workspaceId, key: term.key, value: term.value, terms: terms.length });
}

/** An archived policy leaves the index. */
export async function unindexPolicy(em: EntityManager, policyId: string): Promise<void> {
  await em.nativeDelete(PolicyTermSchema, { policyId });
}

/**
 * Indexes the active policies that have no terms yet (written before the index existed). Returns
 * how many. Within `em`'s transaction when it has one (the data migration, policy-index.migration.ts).
 */
export async function indexUnindexedPolicies(em: EntityManager): Promise<number> {
  const rows = await executeSql<{ id: string }[]>(
    em,
    "select p.id from usage_limits_policies p where p.status = 'active' and not exists (select 1 from usage_policy_terms t where t.policy_id = p.id)",
    [],
  );
  const BATCH = 500;
  for (let i = 0; i < rows.length; i += BATCH) {
    const fork = em.fork({ keepTransactionContext: true });
    await fork.transactional(async (tx) => {
      const policies = await tx.find(UsageLimitsPolicySchema, { id: { $in: rows.slice(i, i + BATCH).map((r) => r.id) } }, { fields: ['id', 'workspaceId', 'conditions'] });
      for (const policy of policies) indexPolicy(tx, policy);
    });
  }
  return rows.length;
}

/**
 * The active policies of the request's workspace whose terms the request all has, oldest first:
 * one index lookup per request term, then the matching policies by id.
 */
export async function findMatchingPolicies(em: EntityManager, organisationId: string, req: UsageRequest): Promise<UsageLimitsPolicy[]> {
  const terms = requestTerms(req);
  // One index seek per term (a UNION ALL: an OR under the shared workspace_id could be planned as
  // a scan of the whole workspace's terms).
  const lookup = 'select policy_id, terms from usage_policy_terms where workspace_id = ? and key = ? and value = ?';
  const rows = await executeSql<{ policy_id: string }[]>(
    em,
    // (PostgreSQL before 16 requires the subquery's alias.)
    `select policy_id from (${terms.map(() => lookup).join(' union all ')}) as found group by policy_id having count(*) = max(terms)`,
    terms.flatMap((t) => [req.workspaceId, t.key, t.value]),
  );
  if (rows.length === 0) return [];
  // By primary key alone, the rest checked here: with the workspace and status in the query, the
  // planner may walk the list index (which also yields this order) over every policy of the
  // workspace, so a request matching one policy would pay for all of them.
  const found = await em.find(UsageLimitsPolicySchema, { id: { $in: rows.map((r) => r.policy_id) } });
  return found
    .filter((p) => p.organisationId === organisationId && p.workspaceId === req.workspaceId && p.status === 'active')
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * `findMatchingPolicies` from the config cache (scope `policies`, keyed by the request's terms):
 * the policies service invalidates it on every write. Copies, so no request's unit of work holds them.
 */
export async function findMatchingPoliciesCached(runtime: Runtime, em: EntityManager, organisationId: string, req: UsageRequest): Promise<UsageLimitsPolicy[]> {
  const cache = configCache(runtime);
  await cache.syncWith(em);
  const key = JSON.stringify([organisationId, req.workspaceId, requestTerms(req)]);
  return cache.get('policies', key, async () => (await findMatchingPolicies(em, organisationId, req)).map((policy) => ({ ...policy })));
}

/** Call once a write to policies is done (create, update, reset, archive): cached lookups are dropped. */
export function policiesChanged(runtime: Runtime): void {
  configCache(runtime).invalidate('policies');
}
