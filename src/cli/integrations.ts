import * as integrations from '../modules/integrations/integrations.service.js';
import type { Integration } from '../modules/integrations/integration.entity.js';
import type { ServiceContext } from '../context.js';
import type { Command } from './args.js';
import { ofLimit, table } from './format.js';
import { allPages, workspaceSlugs } from './lists.js';

/** Integrations and each workspace's access to them (read-only: changes go through the API). */
export const integrationsCommands: Command[] = [
  {
    name: 'integrations list',
    summary: 'List the active integrations (provider credentials of the organisation).',
    options: { workspace: { type: 'string', value: 'ID_OR_SLUG', description: 'only those this workspace may use' } },
    async run(ctx, values) {
      const list = (await allPages((page) => integrations.listIntegrations(ctx, { ...page, workspaceId: values.workspace as string | undefined }))).map(integrationJson);
      return { json: list, text: table(['SLUG', 'PROVIDER', 'KEY', 'NAME'], list.map((i) => [i.slug, i.ai_provider_id, i.masked_key ?? '-', i.name])) };
    },
  },
  {
    name: 'integrations show',
    summary: "Show an integration and each workspace's access: enabled, limits and this period's usage.",
    args: ['SLUG'],
    options: {},
    async run(ctx, _values, [slug]) {
      const integration = await integrations.getIntegration(ctx, slug);
      const access = await accessJson(ctx, integration);
      const json = { ...integrationJson(integration), workspaces: access };
      const rows = access.map((a) => [
        a.workspace_slug,
        a.enabled ? 'enabled' : 'disabled',
        a.usage_limit ? `${a.usage_limit.type} ${ofLimit(a.usage?.current_usage ?? 0, a.usage_limit.credit_limit)}${a.usage_limit.periodic_reset ? ` ${a.usage_limit.periodic_reset}` : ''}` : '-',
        a.rate_limit ? `${a.rate_limit.value} ${a.rate_limit.unit}` : '-',
      ]);
      const text = [
        `${json.name} (${json.slug}): ${json.ai_provider_id}, key ${json.masked_key ?? 'none'}`,
        json.description ?? '',
        table(['WORKSPACE', 'ACCESS', 'USAGE LIMIT', 'RATE LIMIT'], rows),
      ].filter(Boolean);
      return { json, text: text.join('\n') };
    },
  },
];

function integrationJson(i: Integration) {
  return {
    id: i.id,
    slug: i.slug,
    name: i.name,
    description: i.description ?? null,
    ai_provider_id: i.aiProviderId,
    masked_key: i.maskedKey ?? null,
    configurations: i.configurations,
    status: i.status,
    created_at: i.createdAt.toISOString(),
  };
}

async function accessJson(ctx: ServiceContext, integration: Integration) {
  const { workspaces } = await integrations.listIntegrationWorkspaces(ctx, integration.id);
  const usage = await integrations.accessUsage(ctx.runtime, workspaces);
  const slugs = await workspaceSlugs(ctx);
  return workspaces.map((row, i) => ({
    workspace_id: row.workspaceId,
    workspace_slug: slugs.get(row.workspaceId) ?? row.workspaceId,
    enabled: row.enabled,
    usage_limit: row.usageLimit
      ? { type: row.usageLimit.type, credit_limit: row.usageLimit.creditLimit, alert_threshold: row.usageLimit.alertThreshold, periodic_reset: row.usageLimit.periodicReset }
      : null,
    rate_limit: row.rateLimit ? { type: row.rateLimit.type, unit: row.rateLimit.unit, value: row.rateLimit.value } : null,
    usage: usage[i] ? { current_usage: usage[i].currentUsage, status: usage[i].status, period: usage[i].periodKey } : null,
  }));
}
