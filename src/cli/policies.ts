import { POLICY_STATUSES, type PolicyStatus } from '../modules/policies/policies.contract.js';
import * as policies from '../modules/policies/policies.service.js';
import type { UsageLimitsPolicy } from '../modules/policies/usage-limits-policy.entity.js';
import type { Command } from './args.js';
import { isoOrNull, ofLimit, table } from './format.js';
import { allPages, workspaceSlugs } from './lists.js';

/** Usage-limit policies: list, show with this period's usage per value key, archive. */
export const policiesCommands: Command[] = [
  {
    name: 'policies list',
    summary: 'List the usage-limit policies.',
    options: {
      workspace: { type: 'string', value: 'ID_OR_SLUG', description: "only this workspace's" },
      status: { type: 'string', description: 'default: active', choices: POLICY_STATUSES },
    },
    async run(ctx, values) {
      const found = await allPages((page) => policies.listPolicies(ctx, { ...page, workspaceId: values.workspace as string | undefined, status: values.status as PolicyStatus | undefined }));
      const slugs = await workspaceSlugs(ctx);
      const list = found.map(policyJson);
      return {
        json: list,
        text: table(
          ['ID', 'WORKSPACE', 'TYPE', 'LIMIT', 'RESET', 'NAME'],
          list.map((p) => [p.id, slugs.get(p.workspace_id) ?? p.workspace_id, p.type, p.credit_limit, p.periodic_reset ?? 'never', p.name]),
        ),
      };
    },
  },
  {
    name: 'policies show',
    summary: "Show a policy, its conditions, and each value key's usage in the current period.",
    args: ['POLICY_ID'],
    options: {},
    async run(ctx, _values, [id]) {
      const policy = await policies.getPolicy(ctx, id);
      const [buckets] = await policies.valueKeyUsageOf(ctx.runtime, [policy]);
      const usage = buckets.map((b) => ({ value_key: b.valueKey, period: b.periodKey, current_usage: b.currentUsage, reserved: b.reserved, status: b.status }));
      const json = { ...policyJson(policy), next_reset_at: isoOrNull(policies.nextUsageResetAt(policy, ctx.runtime.clock.now())), usage };
      const text = [
        `${json.name} (${json.id}), ${json.status}: ${json.type} limit ${json.credit_limit}${json.alert_threshold !== null ? `, alert at ${json.alert_threshold}` : ''}, resets ${json.periodic_reset ?? 'never'}${json.next_reset_at ? ` (next ${json.next_reset_at})` : ''}`,
        `when ${json.conditions.map((c) => `${c.key}=${c.value}`).join(' and ')}; counted per ${json.group_by.map((g) => g.key).join(', ')}`,
        table(['VALUE KEY', 'USED', 'STATUS'], usage.map((u) => [u.value_key, ofLimit(u.current_usage, json.credit_limit), u.status])),
      ];
      return { json, text: text.join('\n') };
    },
  },
  {
    name: 'policies archive',
    summary: 'Archive a policy: it stops applying to requests.',
    args: ['POLICY_ID'],
    options: {},
    async run(ctx, _values, [id]) {
      const policy = policyJson(await policies.archivePolicy(ctx, id));
      return { json: policy, text: `Archived policy ${policy.id}.` };
    },
  },
];

function policyJson(p: UsageLimitsPolicy) {
  return {
    id: p.id,
    name: p.name,
    workspace_id: p.workspaceId,
    type: p.type,
    status: p.status,
    conditions: p.conditions.map((c) => ({ key: c.key, value: c.value })),
    group_by: p.groupBy.map((g) => ({ key: g.key })),
    credit_limit: p.creditLimit,
    alert_threshold: p.alertThreshold ?? null,
    periodic_reset: p.periodicReset ?? null,
    created_at: p.createdAt.toISOString(),
  };
}
