/**
 * The model providers an integration can reach, by `ai_provider_id`: this list is the only place
 * provider ids are written. The integration entity, the REST body, the GraphQL enum and the model
 * registry all derive from its keys, so a new provider is its adapter file plus one entry here.
 */
import { LocalModel } from './local-model.js';
import type { ModelAdapter } from './model.js';
import { OpenAIChatModel } from './openai-chat.js';

/** What an adapter needs of the integration behind a run (the key decrypted) and of the config. */
export interface ProviderConnection {
  baseUrl: string | null;
  apiKey: string | null;
  /** The integration's `openai_organization` (OpenAI-Organization header); null: none. */
  organization: string | null;
  timeoutMs: number;
}

export interface ModelProvider {
  /** Shown in the GraphQL enum. */
  description: string;
  adapter: (connection: ProviderConnection) => ModelAdapter;
}

export const MODEL_PROVIDERS = {
  local: {
    description: 'The built-in deterministic model (no account, no network).',
    adapter: () => new LocalModel(),
  },
  openai: {
    description: 'Any OpenAI-compatible chat-completions endpoint.',
    adapter: ({ baseUrl, apiKey, organization, timeoutMs }) =>
      new OpenAIChatModel({ baseUrl: baseUrl ?? 'https://api.openai.com/v1', apiKey: apiKey ?? '', organization, timeoutMs }),
  },
} as const satisfies Record<string, ModelProvider>;

export type AiProviderId = keyof typeof MODEL_PROVIDERS;
export const AI_PROVIDER_IDS = Object.keys(MODEL_PROVIDERS) as [AiProviderId, ...AiProviderId[]];
