import type { EntityManager } from '@mikro-orm/core';
import { executeSql } from '../../db/sql.js';
import { configCache, type CacheHost } from '../../lib/config-cache.js';
import type { Page } from '../../lib/paging.js';
import type { PolicyStatus, PolicyType } from './policies.contract.js';
import { UsageLimitsPolicySchema, type UsageLimitsPolicy } from './usage-limits-policy.entity.js';

/** Which policies a list shows (the caller's scope and the filters, resolved). */
export interface PolicyListFilter {
  organisationId: string;
  workspaceId?: string;
  status: PolicyStatus;
  type?: PolicyType;
}

/** How many list positions lie between two page anchors: the most index entries a page walks past. */
export const ANCHOR_EVERY = 1_000;

const ORDER = 'order by created_at desc, id desc';

/**
 * A page of the policy list, newest first (ties by id), with the total, at a cost that depends
 * neither on the number of policies nor on the page's position (the list at 100,000 policies is
 * measured in bench/policies.ts):
 * - the total sums a few rows of `usage_policy_counts`, which triggers keep (migration
 *   0006_policy_counts), instead of counting every matching policy;
 * - the page's ids are read from the list's index alone (it holds every filtered column in the
 *   list's order). A page within the first `every` positions walks to it (`offset`); any other
 *   starts after the nearest page anchor before it (`listAnchors`) and walks fewer than `every`
 *   entries. Then only the page's rows are read.
 * The total and the page are two reads: a policy written between them can shift a page by a row,
 * as a write between two page requests shifts offset paging anyway.
 */
export async function policyPage(
  runtime: CacheHost,
  em: EntityManager,
  filter: PolicyListFilter,
  { offset, limit }: { offset: number; limit: number },
  every = ANCHOR_EVERY,
): Promise<Page<UsageLimitsPolicy>> {
  // The same columns filter both tables.
  const equal = Object.entries({ organisation_id: filter.organisationId, workspace_id: filter.workspaceId, status: filter.status, type: filter.type }).filter(
    ([, value]) => value !== undefined,
  );
  const where = equal.map(([column]) => `${column} = ?`).join(' and ');
  const params = equal.map(([, value]) => value);

  const [{ total }] = await executeSql<Array<{ total: number | string | null }>>(em, `select sum(policies) as total from usage_policy_counts where ${where}`, params);
  const count = Number(total ?? 0);
  const end = Math.min(offset + limit, count);
  if (end <= offset) return { total: count, data: [] };

  const block = Math.floor(offset / every);
  const anchor = block > 0 ? (await listAnchors(runtime, em, { where, params, count, every }))[block - 1] : undefined;
  // After the anchor in the list's order: the index's range starts there (row values, on SQLite and
  // PostgreSQL; the anchor's created_at is read by its id, so no timestamp makes a round trip).
  const after = anchor ? ' and (created_at, id) < ((select created_at from usage_limits_policies where id = ?), ?)' : '';
  const rows = await executeSql<Array<{ id: string }>>(em, `select id from usage_limits_policies where ${where}${after} ${ORDER} limit ? offset ?`, [
    ...params,
    ...(anchor ? [anchor, anchor] : []),
    end - offset,
    anchor ? offset - block * every : offset,
  ]);
  const ids = rows.map((row) => row.id);
  const byId = new Map((await em.find(UsageLimitsPolicySchema, { id: { $in: ids } })).map((policy) => [policy.id, policy]));
  // A policy gone between the two reads (none is ever deleted today) is left out, not an error.
  return { total: count, data: ids.flatMap((id) => byId.get(id) ?? []) };
}

/**
 * The ids at list positions every-1, 2·every-1, … (0-based, newest first) of one filtered list: page
 * anchors, found by one walk of the list's index when a page first needs them, and kept in the
 * config cache (scope `policies`: every policy write through the service drops it, another
 * process's write too, see src/lib/config-cache.ts), about count/every ids per list. The key holds
 * the list's current total as well, so a write that changes the list outside the service (the
 * counts' triggers see every write) is not paged by anchors from before it either.
 */
function listAnchors(runtime: CacheHost, em: EntityManager, list: { where: string; params: unknown[]; count: number; every: number }): Promise<string[]> {
  const cache = configCache(runtime);
  const key = JSON.stringify(['list-anchors', list.where, list.params, list.count, list.every]);
  return cache.syncWith(em).then(() =>
    cache.get('policies', key, async () => {
      const rows = await executeSql<Array<{ id: string }>>(
        em,
        `select id from (select id, row_number() over (${ORDER}) as n from usage_limits_policies where ${list.where}) ranked where n % ? = 0 order by n`,
        [...list.params, list.every],
      );
      return rows.map((row) => row.id);
    }),
  );
}
