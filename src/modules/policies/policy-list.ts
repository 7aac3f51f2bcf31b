import type { EntityManager } from '@mikro-orm/core';
import { executeSql } from '../../db/sql.js';
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

/**
 * A page of the policy list, newest first (ties by id), with the total, at a cost that does not grow
 * with the number of policies (the list at 100,000 policies is measured in bench/policies.ts):
 * - the total sums a few rows of `usage_policy_counts`, which triggers keep (migration
 *   0006_policy_counts), instead of counting every matching policy;
 * - the page's ids are read from the list's index alone (it holds every filtered column in the
 *   list's order), walking from whichever end of the list is nearer, so no page walks more than
 *   half of it; then only the page's rows are read.
 * The total and the page are two reads: a policy written between them can shift a page in the
 * list's second half by a row, as a write between two page requests shifts offset paging anyway.
 */
export async function policyPage(em: EntityManager, filter: PolicyListFilter, { offset, limit }: { offset: number; limit: number }): Promise<Page<UsageLimitsPolicy>> {
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

  // Rows before the page (newest first), or after it: the shorter walk.
  const fromEnd = count - end < offset;
  const order = fromEnd ? 'created_at asc, id asc' : 'created_at desc, id desc';
  const rows = await executeSql<Array<{ id: string }>>(em, `select id from usage_limits_policies where ${where} order by ${order} limit ? offset ?`, [
    ...params,
    end - offset,
    fromEnd ? count - end : offset,
  ]);
  const ids = rows.map((row) => row.id);
  if (fromEnd) ids.reverse();
  const byId = new Map((await em.find(UsageLimitsPolicySchema, { id: { $in: ids } })).map((policy) => [policy.id, policy]));
  // A policy gone between the two reads (none is ever deleted today) is left out, not an error.
  return { total: count, data: ids.flatMap((id) => byId.get(id) ?? []) };
}
