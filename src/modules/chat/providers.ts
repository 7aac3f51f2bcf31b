// Which ModelProvider serves a chat or embeddings request: the integration's `ai_provider_id`.
import type { Runtime } from '../../runtime.js';
import type { ResolvedProvider } from '../integrations/provider-resolution.js';
import { LocalProvider } from './local-provider.js';
import { OpenAIProvider } from './openai-provider.js';
import type { ModelProvider } from './provider.js';

export function providerFor(resolved: ResolvedProvider, runtime: Runtime): ModelProvider {
  if (resolved.integration.aiProviderId === 'local') return new LocalProvider();
  return new OpenAIProvider({
    baseUrl: resolved.integration.baseUrl ?? 'https://api.openai.com/v1',
    apiKey: resolved.integration.apiKey ?? '',
    timeoutMs: runtime.config.MODEL_TIMEOUT_MS,
    retries: runtime.config.MODEL_MAX_RETRIES,
    backoffMs: runtime.config.MODEL_RETRY_BACKOFF_MS,
  });
}
