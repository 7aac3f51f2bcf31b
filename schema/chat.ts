import { claimStream } from '../src/modules/chat/chat-streams.js';
import * as chat from '../src/modules/chat/chat.service.js';
import { listModels, type ModelView } from '../src/modules/chat/models.service.js';
import { BadRequestError, NotFoundError } from '../src/errors.js';
import { builder } from './builder.js';
import { dataPlane } from './data-plane.js';

/*
 * Model traffic in OpenAI wire terms: the request and the answer travel as JSON (wire shape), so
 * fields providers add reach the caller untouched; both front doors share one service.
 */

export const ChatCompletionResultRef = builder.objectRef<chat.ChatCompletionResult>('ChatCompletionResult').implement({
  description: 'The answer to a chat completion request: the completion, or for a stream the id to read its chunks by.',
  fields: (t) => ({
    completion: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The `chat.completion` object in wire shape; null when `stream` was true.',
      resolve: (r) => r.completion,
    }),
    streamId: t.string({
      nullable: true,
      description: 'For `stream: true`: pass it to the `chatCompletionChunks` subscription (within 60 s) to read the chunks.',
      resolve: (r) => r.streamId,
    }),
  }),
});

const ModelRef = builder.objectRef<ModelView>('Model').implement({
  description: 'A model the caller may name in a request.',
  fields: (t) => ({
    id: t.exposeString('id', { description: '`@<virtual-key>/<model>`.' }),
    object: t.exposeString('object', { description: 'Always `model`.' }),
    created: t.exposeInt('created', { description: 'Unix seconds (when its integration was created).' }),
    ownedBy: t.exposeString('owned_by', { description: 'The integration’s slug.' }),
  }),
});

const ModelListRef = builder.objectRef<{ object: 'list'; data: ModelView[] }>('ModelList').implement({
  description: 'Models, OpenAI list shape.',
  fields: (t) => ({
    object: t.exposeString('object', { description: 'Always `list`.' }),
    data: t.field({ type: [ModelRef], description: 'The models.', resolve: (l) => l.data }),
  }),
});

export const virtualKeyArgs = builder.args((t) => ({
  virtualKey: t.string({ description: 'The provider slug; default: the `@<virtual-key>/` prefix of `model`, else the x-gateway-virtual-key (or x-portkey-virtual-key) header.' }),
}));

builder.queryFields((t) => ({
  models: t.field({
    type: ModelListRef,
    description: 'The models the caller may use through its workspace’s enabled providers.',
    resolve: (_root, _args, ctx) => listModels(ctx),
  }),
}));

builder.mutationFields((t) => ({
  createChatCompletion: t.field({
    type: ChatCompletionResultRef,
    description: 'A chat completion (OpenAI request shape; unknown fields go to the provider untouched), under the workspace’s rate limits, budgets and guardrails.',
    args: {
      input: t.arg({ type: 'JSON', required: true, description: 'The request body: `{model, messages, stream?, stream_options?, tools?, …}`.' }),
      ...virtualKeyArgs,
    },
    resolve: (_root, { input, virtualKey }, ctx) => dataPlane(ctx, () => chat.createChatCompletion(ctx, requestBody(input), virtualKey)),
  }),
  createEmbeddings: t.field({
    type: 'JSON',
    description: 'Embeddings of a string or an array of strings (OpenAI request and answer shapes), under the same enforcement as chat.',
    args: {
      input: t.arg({ type: 'JSON', required: true, description: 'The request body: `{model, input, …}`.' }),
      ...virtualKeyArgs,
    },
    resolve: (_root, { input, virtualKey }, ctx) => dataPlane(ctx, () => chat.createEmbeddings(ctx, requestBody(input), virtualKey)),
  }),
}));

builder.subscriptionFields((t) => ({
  chatCompletionChunks: t.field({
    type: 'JSON',
    description: 'The `chat.completion.chunk` objects of a streamed chat completion, in order, until its end. Each stream is read once.',
    args: { streamId: t.arg.string({ required: true, description: 'From `createChatCompletion`.' }) },
    subscribe: (_root, { streamId }, ctx) => {
      const stream = claimStream(ctx.runtime, streamId, ctx.principal.apiKeyId);
      if (!stream) throw new NotFoundError(`No chat completion stream '${streamId}' to read (unknown, already read, or expired).`, { param: 'streamId', code: 'stream_not_found' });
      return stream.chunks();
    },
    resolve: (chunk) => chunk,
  }),
}));

function requestBody(input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new BadRequestError("Invalid 'input': expected the request body as a JSON object.", { param: 'input', code: 'invalid_type' });
  }
  return input as Record<string, unknown>;
}
