/**
 * The GraphQL side of model traffic: createChatCompletion (answered, or a stream read through the
 * chatCompletionChunks subscription over graphql-sse), createEmbeddings, models, and the errors.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localEmbedding } from '../../src/modules/chat/local-provider.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  base = await t.listen();
});
afterAll(() => t.close());

const CREATE = 'mutation($input: JSON!, $vk: String) { createChatCompletion(input: $input, virtualKey: $vk) { completion streamId } }';

describe('GraphQL model traffic', () => {
  it('createChatCompletion answers the completion; the virtual key may be an argument', async () => {
    const r = await t.graphql(CREATE, { input: { model: 'local', messages: [{ role: 'user', content: 'Hi' }] }, vk: 'local' });
    expect(r.errors).toBeUndefined();
    expect(r.data.createChatCompletion.streamId).toBeNull();
    expect(r.data.createChatCompletion.completion).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'You said: Hi' } }] });
  });

  it('a stream is read once through chatCompletionChunks, by the key that started it', async () => {
    const r = await t.graphql(CREATE, { input: { model: '@local/local', messages: [{ role: 'user', content: 'Stream this answer' }], stream: true, stream_options: { include_usage: true } } });
    const { streamId, completion } = r.data.createChatCompletion;
    expect(completion).toBeNull();
    expect(streamId).toMatch(/^chatstream_[A-Za-z0-9]{24}$/);

    const client = createClient({ url: `${base}/graphql/stream`, headers: { 'x-gateway-api-key': t.key } });
    const chunks: any[] = [];
    for await (const result of client.iterate({ query: 'subscription($id: String!) { chatCompletionChunks(streamId: $id) }', variables: { id: streamId } })) {
      chunks.push(result.data!.chatCompletionChunks);
    }

    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('You said: Stream this answer');
    expect(chunks.at(-1).usage.total_tokens).toBeGreaterThan(0);

    client.dispose();

    // Read once: a second subscription finds nothing.
    const again = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-gateway-api-key': t.key },
      body: JSON.stringify({ query: 'subscription($id: String!) { chatCompletionChunks(streamId: $id) }', variables: { id: streamId } }),
    });
    const text = await again.text();
    expect(text).toContain(`No chat completion stream '${streamId}' to read (unknown, already read, or expired).`);
    expect(text).toContain('stream_not_found');
  });

  it('createEmbeddings and models', async () => {
    const r = await t.graphql('mutation($input: JSON!) { createEmbeddings(input: $input) }', { input: { model: '@local/local', input: 'alpha' } });
    expect(r.errors).toBeUndefined();
    expect(r.data.createEmbeddings.data[0].embedding).toEqual(localEmbedding('alpha'));
    const m = await t.graphql('{ models { object data { id object ownedBy } } }');
    expect(m.data.models).toEqual({ object: 'list', data: [{ id: '@local/local', object: 'model', ownedBy: 'local' }] });
  });

  it('bad input answers with the documented error', async () => {
    const notObject = await t.graphql(CREATE, { input: [1, 2] });
    expect(notObject.errors?.[0]).toMatchObject({ message: "Invalid 'input': expected the request body as a JSON object.", extensions: { status: 400, param: 'input', code: 'invalid_type' } });
    const noMessages = await t.graphql(CREATE, { input: { model: '@local/local' } });
    expect(noMessages.errors?.[0]).toMatchObject({ message: "Missing required parameter: 'messages'.", extensions: { status: 400, param: 'messages' } });
    const badVk = await t.graphql(CREATE, { input: { model: '@/x', messages: [] } });
    expect(badVk.errors?.[0].extensions).toMatchObject({ status: 400, param: 'messages' });
    const badForm = await t.graphql(CREATE, { input: { model: '@local', messages: [{ role: 'user', content: 'x' }] } });
    expect(badForm.errors?.[0].message).toBe("Invalid model '@local': the virtual-key form is '@<virtual-key>/<model>', e.g. '@openai-prod/gpt-4o-mini'.");
    const badMeta = await t.request('POST', '/v1/chat/completions', { body: { model: '@local/local', messages: [{ role: 'user', content: 'x' }] }, headers: { 'x-gateway-metadata': '{"user": 5}' } });
    expect(badMeta.status).toBe(400);
    expect(badMeta.body.error).toEqual({ message: "Invalid 'x-gateway-metadata': the value of 'user' must be a string.", type: 'invalid_request_error', param: 'x-gateway-metadata', code: 'invalid_value' });
    const badEmbed = await t.request('POST', '/v1/embeddings', { body: { model: '@local/local', input: [1] } });
    expect(badEmbed.status).toBe(400);
    expect(badEmbed.body.error.param).toBe('input');
  });
});
