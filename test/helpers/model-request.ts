import type { ModelRequest } from '../../src/modules/runs/models/model.js';

/** A model request with every option at its default (the adapters' unit tests override what each is about). */
export function modelRequest(overrides: Partial<ModelRequest> & Pick<ModelRequest, 'model' | 'messages'>): ModelRequest {
  return {
    tools: [],
    toolChoice: 'auto',
    parallelToolCalls: true,
    maxCompletionTokens: null,
    maxPromptTokens: null,
    temperature: null,
    topP: null,
    responseFormat: 'auto',
    ...overrides,
  };
}
