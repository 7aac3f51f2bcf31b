import { createPromptBody, listPromptsQuery, makeDefaultPromptBody, renderPromptBody, updatePromptBody, updatePromptVersionBody } from '../bodies/prompts.js';
import { graphqlInput, promptsContract } from '../../schema/contracts.js';
import type { RouteRow } from '../route.js';

/*
 * Prompts, as Portkey's prompt API and the portkey-ai SDK's `prompts` methods call them.
 * `{promptId}` is a UUID or a slug. Portkey's prompt objects have no nullable fields: a setting
 * a version does not have is left out rather than sent as null.
 */

type Wire = Record<string, unknown>;

/** The keys of `object` whose value is not null. */
function present(object: Wire): Wire {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== null));
}

/** Portkey's prompt documents `tool_choice` as an object: a string form is `{type: <it>}`. */
function promptToolChoice(choice: unknown): unknown {
  return typeof choice === 'string' ? { type: choice } : choice;
}

/** Portkey's `Prompt`: the prompt's own fields with one version's content. */
function promptBody(own: Wire, version: Wire): Wire {
  return present({
    id: own.id,
    slug: own.slug,
    name: version.name,
    collection_id: own.collection_id,
    string: version.string,
    parameters: version.parameters,
    prompt_version: version.version,
    prompt_version_id: version.id,
    prompt_version_description: version.version_description,
    prompt_version_label_id: version.label_id,
    virtual_key: version.virtual_key,
    model: version.model,
    functions: version.functions,
    tools: version.tools,
    tool_choice: promptToolChoice(version.tool_choice),
    template_metadata: version.template_metadata,
    status: own.status,
    created_at: own.created_at,
    last_updated_at: own.last_updated_at,
  });
}

/** Portkey's `PromptVersionSummary`. */
function versionSummary(promptId: unknown, version: Wire): Wire {
  const { id, version: number, version_description, label_id, created_at, ...template } = version;
  const { name: _name, ...promptTemplate } = template;
  return present({
    id,
    prompt_id: promptId,
    prompt_template: present({ ...promptTemplate, tool_choice: promptToolChoice(promptTemplate.tool_choice) }),
    prompt_version: number,
    prompt_description: version_description,
    label_id,
    created_at,
    object: 'prompt',
  });
}

export const promptsRoutes: RouteRow[] = [
  {
    method: 'POST',
    path: '/v1/prompts',
    operation: 'RestCreatePrompt',
    body: createPromptBody,
    variables: ({ body }) => ({ input: graphqlInput(promptsContract.createPromptContract, body) }),
    result: ({ createPrompt: p }) => ({ id: p.id, slug: p.slug, version_id: p.current_version.id, object: 'prompt' }),
  },
  {
    method: 'GET',
    path: '/v1/prompts',
    operation: 'RestListPrompts',
    query: listPromptsQuery,
    variables: ({ query }) => ({
      workspaceId: query.workspace_id,
      collectionId: query.collection_id,
      search: query.search,
      currentPage: query.current_page,
      pageSize: query.page_size,
    }),
    result: ({ prompts }) => ({ total: prompts.total, data: prompts.data.map((p: Wire) => ({ ...p, object: 'prompt' })) }),
  },
  {
    method: 'GET',
    path: '/v1/prompts/:promptId',
    operation: 'RestGetPrompt',
    variables: ({ params }) => ({ promptId: params.promptId }),
    result: ({ prompt }) => promptBody(prompt, prompt.default_version),
  },
  {
    method: 'PUT',
    path: '/v1/prompts/:promptId',
    operation: 'RestUpdatePrompt',
    body: updatePromptBody,
    variables: ({ params, body }) => ({ promptId: params.promptId, input: graphqlInput(promptsContract.updatePromptContract, body) }),
    result: ({ updatePrompt: p }) => ({ id: p.id, slug: p.slug, prompt_version_id: p.current_version.id }),
  },
  {
    method: 'DELETE',
    path: '/v1/prompts/:promptId',
    operation: 'RestArchivePrompt',
    variables: ({ params }) => ({ promptId: params.promptId }),
    result: () => ({}),
  },
  {
    // The portkey-ai SDK's `prompts.publish`.
    method: 'PUT',
    path: '/v1/prompts/:promptId/makeDefault',
    operation: 'RestMakePromptVersionDefault',
    body: makeDefaultPromptBody,
    variables: ({ params, body }) => ({ promptId: params.promptId, input: graphqlInput(promptsContract.makeDefaultPromptContract, body) }),
    result: () => ({}),
  },
  {
    method: 'GET',
    path: '/v1/prompts/:promptId/versions',
    operation: 'RestListPromptVersions',
    variables: ({ params }) => ({ promptId: params.promptId }),
    result: ({ prompt }) => prompt.versions.map((version: Wire) => versionSummary(prompt.id, version)),
  },
  {
    method: 'GET',
    path: '/v1/prompts/:promptId/versions/:versionId',
    operation: 'RestGetPromptVersion',
    variables: ({ params }) => ({ promptId: params.promptId, versionId: params.versionId }),
    result: ({ promptVersion: { prompt, ...version } }) => promptBody(prompt, version),
  },
  {
    method: 'PUT',
    path: '/v1/prompts/:promptId/versions/:versionId',
    operation: 'RestLabelPromptVersion',
    body: updatePromptVersionBody,
    variables: ({ params, body }) => ({
      promptId: params.promptId,
      versionId: params.versionId,
      input: graphqlInput(promptsContract.updatePromptVersionContract, body),
    }),
    result: () => ({}),
  },
  {
    method: 'POST',
    path: '/v1/prompts/:promptId/render',
    operation: 'RestRenderPrompt',
    body: renderPromptBody,
    variables: ({ params, body }) => ({ promptId: params.promptId, input: body }),
    result: ({ renderPrompt }) => ({ success: true, data: renderPrompt }),
  },
  {
    // A completion of the rendered prompt through chat completions; a stream is chat's: bare
    // `data: {chunk}` events and a bare `data: [DONE]`.
    method: 'POST',
    path: '/v1/prompts/:promptId/completions',
    operation: 'RestCreatePromptCompletion',
    body: renderPromptBody,
    dataPlane: true,
    variables: ({ params, body }) => ({ promptId: params.promptId, input: body }),
    result: ({ createPromptCompletion }) => ({ status: 'success', headers: {}, body: createPromptCompletion.completion }),
    stream: {
      when: ({ body }) => body.stream === true,
      operation: 'RestChatCompletionChunks',
      variables: (_input, data) => ({ streamId: data.createPromptCompletion.stream_id }),
      event: (chunk) => ({ data: JSON.stringify(chunk) }),
      bareDone: true,
    },
  },
];
