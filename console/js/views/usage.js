// Usage: one bar per bucket of every usage-limit policy and of every workspace's access to an
// integration — used / limit, the alert threshold marked, the period and when it resets.
import { gql } from '../api.js';
import { badge, clear, errorBox, fmt, h, section } from '../dom.js';

// Without a workspace the list holds every policy the key can see.
const POLICIES = `{ usageLimitsPolicies(pageSize: 1000) { data {
  id name type creditLimit alertThreshold periodicReset nextUsageResetAt lastResetAt workspaceId
  conditions { key value } groupBy { key }
  valueKeyUsage { valueKey currentUsage status isThresholdAlertsSent isExhaustedAlertsSent }
} } }`;

const ACCESS = `{ integrations(pageSize: 1000) { data {
  slug name
  workspaces { workspaces { workspaceId enabled
    usageLimits { type creditLimit alertThreshold periodicReset }
    usage { currentUsage periodKey status nextResetAt }
  } }
} } }`;

export async function usageView(root, ctx, signal) {
  const policiesBox = h('div', {}, h('p', { class: 'loading' }, 'Loading…'));
  const accessBox = h('div', {}, h('p', { class: 'loading' }, 'Loading…'));
  clear(
    root,
    h('div', { class: 'toolbar' }, h('button', { type: 'button', onclick: () => usageView(root, ctx, signal) }, 'Refresh')),
    section('Usage-limit policies', policiesBox),
    section('Workspace access to integrations', accessBox),
  );
  await Promise.all([
    policyBars(ctx).then((content) => clear(policiesBox, content), (error) => clear(policiesBox, errorBox(error))),
    accessBars(ctx).then((content) => clear(accessBox, content), (error) => clear(accessBox, errorBox(error))),
  ]);
}

async function policyBars(ctx) {
  const policies = (await gql(POLICIES)).usageLimitsPolicies.data;
  if (policies.length === 0) return h('p', { class: 'empty' }, 'No active usage-limit policy.');
  return policies.map((p) => {
    // A bucket exists once a request counted against it; before that the policy shows one empty bar.
    const buckets = p.valueKeyUsage.length ? p.valueKeyUsage : [{ valueKey: 'no request counted yet', currentUsage: 0, status: 'active' }];
    return h(
      'div',
      { class: 'limit', 'data-testid': 'policy', 'data-name': p.name },
      h('h3', {}, p.name, ' ', badge(p.type), ' ', h('span', { class: 'muted' }, `workspace ${ctx.workspaceName(p.workspaceId)}`)),
      h('p', { class: 'muted' }, `when ${p.conditions.map((c) => `${c.key} = ${c.value}`).join(', ') || 'always'}; one bucket per ${p.groupBy.map((g) => g.key).join(' + ') || 'policy'}`),
      buckets.map((b) =>
        bar({
          label: b.valueKey,
          used: b.currentUsage,
          limit: p.creditLimit,
          threshold: p.alertThreshold,
          type: p.type,
          exhausted: b.status === 'exhausted',
          period: p.periodicReset ? `resets ${p.periodicReset}; next reset ${fmt.date(p.nextUsageResetAt)}` : 'never resets',
        }),
      ),
    );
  });
}

async function accessBars(ctx) {
  let integrations;
  try {
    integrations = (await gql(ACCESS)).integrations.data;
  } catch (error) {
    if (error.status === 403) return h('p', { class: 'muted' }, 'Integrations are visible to organisation keys only.');
    throw error;
  }
  const limited = integrations.flatMap((i) => i.workspaces.workspaces.filter((a) => a.usageLimits?.length).map((a) => ({ integration: i, access: a })));
  if (limited.length === 0) return h('p', { class: 'empty' }, 'No workspace access has a usage limit.');
  return limited.map(({ integration, access }) => {
    const limit = access.usageLimits[0];
    const usage = access.usage ?? { currentUsage: 0, status: 'active', periodKey: '—', nextResetAt: null };
    return h(
      'div',
      { class: 'limit', 'data-testid': 'access', 'data-name': `${integration.slug}/${ctx.workspaceName(access.workspaceId)}` },
      h('h3', {}, `${integration.name} (${integration.slug})`, ' ', badge(limit.type), ' ', h('span', { class: 'muted' }, `workspace ${ctx.workspaceName(access.workspaceId)}`), access.enabled ? '' : [' ', badge('disabled')]),
      bar({
        label: `workspace:${access.workspaceId}`,
        used: usage.currentUsage,
        limit: limit.creditLimit,
        threshold: limit.alertThreshold,
        type: limit.type,
        exhausted: usage.status === 'exhausted',
        period: `period ${usage.periodKey}; ${limit.periodicReset ? `resets ${limit.periodicReset}; next reset ${fmt.date(usage.nextResetAt)}` : 'never resets'}`,
      }),
    );
  });
}

/** One bucket: the fill is used / limit, the tick the alert threshold. */
function bar({ label, used, limit, threshold, type, exhausted, period }) {
  const percent = limit > 0 ? Math.min(100, (used / limit) * 100) : 100;
  const alerting = threshold !== null && threshold !== undefined && used >= threshold;
  return h(
    'div',
    { class: `bucket${exhausted ? ' exhausted' : alerting ? ' alerting' : ''}`, 'data-testid': 'bucket', 'data-used': used, 'data-limit': limit },
    h('div', { class: 'bucket-head' }, h('span', { class: 'mono' }, label), h('span', { 'data-testid': 'bucket-amount' }, `${fmt.amount(used, type)} / ${fmt.amount(limit, type)}`), exhausted && badge('exhausted')),
    h(
      'div',
      { class: 'bar', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': limit, 'aria-valuenow': used, 'aria-label': label },
      h('div', { class: 'fill', style: { width: `${percent}%` } }),
      threshold !== null && threshold !== undefined && limit > 0 && h('div', { class: 'threshold', title: `alert at ${fmt.amount(threshold, type)}`, style: { left: `${Math.min(100, (threshold / limit) * 100)}%` } }),
    ),
    h('div', { class: 'muted small' }, threshold !== null && threshold !== undefined ? `alert at ${fmt.amount(threshold, type)} · ` : '', period),
  );
}
