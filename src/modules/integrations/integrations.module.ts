import type { DomainModule } from '../module.js';
import { runHooks } from '../runs/admission.js';
import { IntegrationSchema } from './integration.entity.js';
import { grantGlobalAccess, insertIntegration } from './integrations.service.js';
import { refuseModelsNotOffered } from './model-admission.js';
import { ProviderSchema } from './provider.entity.js';
import { RateLimitCounterSchema } from './rate-limit-counter.entity.js';
import { WorkspaceAccessSchema } from './workspace-access.entity.js';

/** The built-in integration every install starts with: the deterministic local model, for all workspaces. */
export const LOCAL_INTEGRATION_SLUG = 'local';

export const integrationsModule: DomainModule = {
  name: 'integrations',
  entities: [IntegrationSchema, WorkspaceAccessSchema, ProviderSchema, RateLimitCounterSchema],
  // Requests for a model the integration does not offer are refused before model work.
  start(runtime) {
    runtime.singleton('integrations.hooks', () => runHooks(runtime).addAdmissionCheck(refuseModelsNotOffered));
  },
  // A new workspace gets each integration's global access (and a provider where it is enabled).
  onWorkspaceCreated: (em, workspace, runtime) => grantGlobalAccess(em, workspace, runtime),
  // First start: the `default` workspace (and every later one) can use virtual key `local` at once.
  async onBootstrap(em, organisation, _workspace, runtime) {
    await insertIntegration(em, runtime, {
      organisationId: organisation.id,
      name: 'Local model',
      slug: LOCAL_INTEGRATION_SLUG,
      description: 'The built-in deterministic model: no provider account, no network.',
      aiProviderId: 'local',
      globalAccess: { enabled: true, usageLimit: null, rateLimit: null },
    });
  },
};
