/**
 * Which ModelAdapter serves a run: chosen by the integration behind the run's virtual key
 * (`ai_provider_id`, one of the providers listed in providers.ts). Factories are per runtime, so a
 * test can replace one without touching the executor.
 */
import type { Runtime } from '../../../runtime.js';
import type { ResolvedProvider } from '../../integrations/provider-resolution.js';
import { ModelError, type ModelAdapter } from './model.js';
import { MODEL_PROVIDERS } from './providers.js';

export type ModelAdapterFactory = (provider: ResolvedProvider, runtime: Runtime) => ModelAdapter;

export class ModelRegistry {
  private readonly factories = new Map<string, ModelAdapterFactory>(
    Object.entries(MODEL_PROVIDERS).map(([id, registered]) => [
      id,
      (provider, runtime) =>
        registered.adapter({
          baseUrl: provider.integration.baseUrl,
          apiKey: provider.integration.apiKey,
          organization: provider.integration.openaiOrganization,
          timeoutMs: runtime.config.MODEL_TIMEOUT_MS,
        }),
    ]),
  );

  /** Replaces (or adds) the factory for one `ai_provider_id`. */
  set(aiProviderId: string, factory: ModelAdapterFactory): void {
    this.factories.set(aiProviderId, factory);
  }

  adapterFor(provider: ResolvedProvider, runtime: Runtime): ModelAdapter {
    const factory = this.factories.get(provider.integration.aiProviderId);
    if (!factory) throw new ModelError('server_error', `No model adapter for provider type '${provider.integration.aiProviderId}'.`);
    return factory(provider, runtime);
  }
}

export function modelRegistry(runtime: Runtime): ModelRegistry {
  return runtime.singleton('runs.models', () => new ModelRegistry());
}
