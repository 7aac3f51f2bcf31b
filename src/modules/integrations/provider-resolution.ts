// Data-plane resolution of a virtual key: (caller's workspace, `x-gateway-virtual-key`) → provider
// → integration + the workspace's access to it, or a clear 4xx. Used by every route that makes a
// model work; never logs the decrypted key.
import type { EntityManager } from '@mikro-orm/core';
import { NotFoundError, PermissionError } from '../../errors.js';
import { configCache } from '../../lib/config-cache.js';
import { decryptSecret } from '../../lib/crypto.js';
import type { Runtime } from '../../runtime.js';
import { IntegrationSchema, type AiProviderId } from './integration.entity.js';
import { EMPTY_CONFIGURATIONS, type RateLimit, type UsageLimit } from './limits.js';
import type { IntegrationModels } from './models.js';
import { ProviderSchema } from './provider.entity.js';
import { WorkspaceAccessSchema } from './workspace-access.entity.js';

export interface ResolvedProvider {
  provider: { id: string; slug: string; workspaceId: string; inputGuardrails: string[]; outputGuardrails: string[] };
  integration: {
    id: string;
    slug: string;
    aiProviderId: AiProviderId;
    baseUrl: string | null;
    /** Decrypted. Never log it, never return it. A non-enumerable property (see below). */
    apiKey: string | null;
    defaultModel: string | null;
    prices: Record<string, { input: number; output: number }> | null;
    /** Sent upstream as `OpenAI-Organization` by the openai provider; null: none. */
    openaiOrganization: string | null;
    /** Which models it offers (`PUT /v1/integrations/{slug}/models`); null: every model. */
    models: IntegrationModels | null;
  };
  access: {
    id: string;
    enabled: boolean;
    usageLimit: { type: 'cost' | 'tokens'; creditLimit: number; alertThreshold: number | null; periodicReset: 'monthly' | 'weekly' | null } | null;
    rateLimit: { type: 'requests'; unit: 'rpm' | 'rph' | 'rpd'; value: number } | null;
  };
}

/**
 * The provider a virtual key names in a workspace, with its integration and the workspace's
 * access. Unknown (or deleted) virtual key: 404 `virtual_key_not_found`. Access disabled, or the
 * integration deleted: 403 `integration_disabled`. Served from the config cache (scope
 * `providers`): the services that write providers, integrations and access invalidate it.
 */
export async function resolveProvider(em: EntityManager, runtime: Runtime, workspaceId: string, virtualKey: string): Promise<ResolvedProvider> {
  const cache = configCache(runtime);
  await cache.syncWith(em);
  return cache.get('providers', `${workspaceId}\u0000${virtualKey}`, () => loadProvider(em, runtime, workspaceId, virtualKey));
}

async function loadProvider(em: EntityManager, runtime: Runtime, workspaceId: string, virtualKey: string): Promise<ResolvedProvider> {
  const provider = await em.findOne(ProviderSchema, { workspaceId, activeSlug: virtualKey });
  if (!provider) {
    throw new NotFoundError(`No provider found for virtual key '${virtualKey}' in this workspace.`, { code: 'virtual_key_not_found' });
  }
  const integration = await em.findOne(IntegrationSchema, { id: provider.integrationId });
  if (!integration || integration.status !== 'active') {
    throw new PermissionError(`The integration behind virtual key '${virtualKey}' has been deleted.`, { code: 'integration_disabled' });
  }
  const access = await em.findOne(WorkspaceAccessSchema, { integrationId: integration.id, workspaceId });
  if (!access?.enabled) {
    throw new PermissionError(`Integration '${integration.slug}' (virtual key '${virtualKey}') is disabled for this workspace.`, {
      code: 'integration_disabled',
    });
  }
  let apiKey: string | null = null;
  if (integration.encryptedKey) {
    try {
      apiKey = decryptSecret(integration.encryptedKey, runtime.secretKey);
    } catch {
      // Masked as a 500 to the caller; the log says what to check, without any key material.
      throw new Error(`The key of integration '${integration.slug}' cannot be decrypted: was GATEWAY_SECRET_KEY (or data/secret.key) changed?`);
    }
  }
  const configurations = { ...EMPTY_CONFIGURATIONS, ...integration.configurations };
  const resolvedIntegration = {
    id: integration.id,
    slug: integration.slug,
    aiProviderId: integration.aiProviderId,
    baseUrl: configurations.baseUrl ?? null,
    defaultModel: configurations.defaultModel ?? null,
    prices: configurations.prices ?? null,
    openaiOrganization: configurations.openaiOrganization ?? null,
    models: configurations.models ?? null,
  } as ResolvedProvider['integration'];
  // Not enumerable: JSON.stringify, pino and object spreads leave it out, so logging a resolved
  // provider (or any part of it) cannot leak the key. Read it as `resolved.integration.apiKey`.
  Object.defineProperty(resolvedIntegration, 'apiKey', { value: apiKey, enumerable: false, writable: false });
  return {
    provider: {
      id: provider.id,
      slug: provider.slug,
      workspaceId: provider.workspaceId,
      inputGuardrails: [...(provider.inputGuardrails ?? [])],
      outputGuardrails: [...(provider.outputGuardrails ?? [])],
    },
    integration: resolvedIntegration,
    access: {
      id: access.id,
      enabled: access.enabled,
      usageLimit: (access.usageLimit as UsageLimit | null) ?? null,
      rateLimit: (access.rateLimit as RateLimit | null) ?? null,
    },
  };
}
