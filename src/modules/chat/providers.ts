// Which ModelProvider serves a chat or embeddings request: the integration's `ai_provider_id`.
// Keyed by every id in runs/models/providers.ts, so a provider added there does not typecheck
// until chat traffic can reach it too (instead of silently going to the openai adapter).
import type { Runtime } from '../../runtime.js';
import type { ResolvedProvider } from '../integrations/provider-resolution.js';
import type { AiProviderId } from '../runs/models/providers.js';
import { LocalProvider } from './local-provider.js';
import { OpenAIProvider } from './openai-provider.js';
import type { ModelProvider } from './provider.js';

/** Stateless (LocalModel keeps nothing between calls), so one serves every request. */
const local = new LocalProvider();

const CHAT_PROVIDERS: Record<AiProviderId, (resolved: ResolvedProvider, runtime: Runtime) => ModelProvider> = {
  local: () => local,
  openai: (resolved, runtime) =>
    new OpenAIProvider({
      baseUrl: resolved.integration.baseUrl ?? 'https://api.openai.com/v1',
      apiKey: resolved.integration.apiKey ?? '',
      organization: resolved.integration.openaiOrganization,
      timeoutMs: runtime.config.MODEL_TIMEOUT_MS,
      retries: runtime.config.MODEL_MAX_RETRIES,
      backoffMs: runtime.config.MODEL_RETRY_BACKOFF_MS,
    }),
};

/**
 * The provider of a resolved integration. Made once per resolution (the config cache keeps a
 * resolution until what it was built from changes, then resolves anew), not once per request.
 */
export function providerFor(resolved: ResolvedProvider, runtime: Runtime): ModelProvider {
  const made = runtime.singleton('chat.providers', () => new WeakMap<ResolvedProvider['integration'], ModelProvider>());
  let provider = made.get(resolved.integration);
  if (!provider) made.set(resolved.integration, (provider = CHAT_PROVIDERS[resolved.integration.aiProviderId](resolved, runtime)));
  return provider;
}
