import { modelRequestBody } from '../bodies/chat.js';
import type { RouteRow } from '../route.js';

/*
 * Model traffic, OpenAI compatible. The virtual key is the `@<virtual-key>/` prefix of `model`,
 * or the x-gateway-virtual-key (x-portkey-virtual-key) header, read by the service. A streamed
 * chat completion answers with bare `data: {chunk}` events (no event name: the openai SDK treats
 * named events as something else) and a bare `data: [DONE]`, as OpenAI sends them.
 */
const MODEL_HEADERS: RouteRow['headers'] = {
  'x-gateway-virtual-key': { description: 'The provider (virtual key) when `model` does not name one as `@<virtual-key>/<model>` (`x-portkey-virtual-key` is read too).' },
  'x-gateway-metadata': { description: 'A JSON object of strings describing the request, merged with the body\'s `metadata` (`x-portkey-metadata` is read too).' },
};

export const chatRoutes: RouteRow[] = [
  {
    method: 'POST',
    path: '/v1/chat/completions',
    operation: 'RestCreateChatCompletion',
    body: modelRequestBody,
    headers: MODEL_HEADERS,
    dataPlane: true,
    variables: ({ body }) => ({ input: body }),
    result: (data) => data.createChatCompletion.completion,
    stream: {
      when: ({ body }) => body.stream === true,
      operation: 'RestChatCompletionChunks',
      variables: (_input, data) => ({ streamId: data.createChatCompletion.stream_id }),
      event: (chunk) => ({ data: JSON.stringify(chunk) }),
      bareDone: true,
    },
  },
  {
    method: 'POST',
    path: '/v1/embeddings',
    operation: 'RestCreateEmbeddings',
    body: modelRequestBody,
    headers: MODEL_HEADERS,
    dataPlane: true,
    variables: ({ body }) => ({ input: body }),
  },
  {
    method: 'GET',
    path: '/v1/models',
    operation: 'RestListModels',
  },
];
