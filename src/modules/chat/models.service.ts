/**
 * `GET /v1/models`: the models a caller may use, through each provider of its workspace whose
 * integration is active and enabled for the workspace. Each is listed as `@<virtual-key>/<model>`
 * (the form a chat request may name it by): the integration's enabled models (its provider's
 * catalogue and its custom models, src/modules/integrations/models.ts) and its default model.
 */
import type { ServiceContext } from '../../context.js';
import { resolveWorkspace } from '../../auth/tenancy.js';
import { IntegrationSchema } from '../integrations/integration.entity.js';
import { offeredModels } from '../integrations/models.js';
import { ProviderSchema } from '../integrations/provider.entity.js';
import { WorkspaceAccessSchema } from '../integrations/workspace-access.entity.js';

export interface ModelView {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

export async function listModels(ctx: ServiceContext): Promise<{ object: 'list'; data: ModelView[] }> {
  const workspace = await resolveWorkspace(ctx.em, ctx.principal);
  const providers = await ctx.em.find(ProviderSchema, { workspaceId: workspace.id, status: 'active' }, { orderBy: { slug: 'asc' } });
  const integrationIds = [...new Set(providers.map((p) => p.integrationId))];
  const [integrations, accesses] = await Promise.all([
    ctx.em.find(IntegrationSchema, { id: { $in: integrationIds }, status: 'active' }),
    ctx.em.find(WorkspaceAccessSchema, { integrationId: { $in: integrationIds }, workspaceId: workspace.id, enabled: true }),
  ]);
  const byId = new Map(integrations.map((i) => [i.id, i]));
  const enabled = new Set(accesses.map((a) => a.integrationId));
  const data: ModelView[] = [];
  for (const provider of providers) {
    const integration = byId.get(provider.integrationId);
    if (!integration || !enabled.has(integration.id)) continue;
    const config = integration.configurations;
    const offered = offeredModels(integration.aiProviderId, config?.models, config?.prices).filter((m) => m.enabled);
    const names = new Set([...(config?.defaultModel ? [config.defaultModel] : []), ...offered.map((m) => m.slug)]);
    for (const name of names) {
      data.push({ id: `@${provider.slug}/${name}`, object: 'model', created: Math.floor(integration.createdAt.getTime() / 1000), owned_by: integration.slug });
    }
  }
  return { object: 'list', data };
}
