/**
 * The openai SDK v6's modify / delete / retrieve-step methods of Assistants v2 against a real
 * HTTP server: what they send is what Gatehouse routes, and what it answers parses into the
 * SDK's types (`*.deleted` objects, whole assistants, threads, messages, runs and steps).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';

let t: TestApp;
let openai: OpenAI;
const weatherTool = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } };

beforeAll(async () => {
  t = await createTestApp();
  const baseURL = `${await t.listen()}/v1`;
  openai = new OpenAI({ apiKey: TEST_KEY, baseURL, defaultHeaders: { 'x-gateway-virtual-key': 'local', 'OpenAI-Beta': 'assistants=v2' }, maxRetries: 0 });
});
afterAll(() => t.close());

describe('openai SDK v6: modify, delete, retrieve a step', () => {
  it('beta.assistants.update / delete', async () => {
    const assistant = await openai.beta.assistants.create({ model: 'local-test', name: 'Before', metadata: { v: '1' } });
    const updated = await openai.beta.assistants.update(assistant.id, { name: 'After', instructions: 'Be brief.', metadata: { v: '2' } });
    expect(updated).toEqual({ ...assistant, name: 'After', instructions: 'Be brief.', metadata: { v: '2' } });
    expect(await openai.beta.assistants.retrieve(assistant.id)).toEqual(updated);

    expect(await openai.beta.assistants.delete(assistant.id)).toEqual({ id: assistant.id, object: 'assistant.deleted', deleted: true });
    await expect(openai.beta.assistants.retrieve(assistant.id)).rejects.toMatchObject({ status: 404 });
  });

  it('beta.threads.update / delete, beta.threads.messages.update / delete', async () => {
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'hello' }, { role: 'user', content: 'again' }] });
    const updated = await openai.beta.threads.update(thread.id, { metadata: { topic: 'greeting' } });
    expect(updated).toEqual({ ...thread, metadata: { topic: 'greeting' } });

    const [first, second] = (await openai.beta.threads.messages.list(thread.id, { order: 'asc' })).data;
    const message = await openai.beta.threads.messages.update(first.id, { thread_id: thread.id, metadata: { read: 'yes' } });
    expect(message).toEqual({ ...first, metadata: { read: 'yes' } });
    expect(await openai.beta.threads.messages.delete(second.id, { thread_id: thread.id })).toEqual({ id: second.id, object: 'thread.message.deleted', deleted: true });
    expect((await openai.beta.threads.messages.list(thread.id)).data.map((m) => m.id)).toEqual([first.id]);

    expect(await openai.beta.threads.delete(thread.id)).toEqual({ id: thread.id, object: 'thread.deleted', deleted: true });
    await expect(openai.beta.threads.retrieve(thread.id)).rejects.toMatchObject({ status: 404 });
  });

  it('beta.threads.runs.update and beta.threads.runs.steps.retrieve; deleting a running thread is refused', async () => {
    const assistant = await openai.beta.assistants.create({ model: 'local-test', tools: [weatherTool] });
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'get_weather in Oslo' }] });
    const run = await openai.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id }, { pollIntervalMs: 20 });
    expect(run.status).toBe('requires_action');

    const updated = await openai.beta.threads.runs.update(run.id, { thread_id: thread.id, metadata: { ticket: '42' } });
    expect(updated).toEqual({ ...run, metadata: { ticket: '42' } });

    const [step] = (await openai.beta.threads.runs.steps.list(run.id, { thread_id: thread.id })).data;
    const retrieved = await openai.beta.threads.runs.steps.retrieve(step.id, { thread_id: thread.id, run_id: run.id });
    expect(retrieved).toEqual(step);
    expect(retrieved).toMatchObject({ object: 'thread.run.step', type: 'tool_calls', status: 'in_progress' });

    await expect(openai.beta.threads.delete(thread.id)).rejects.toMatchObject({
      status: 400,
      error: { message: `Can't delete ${thread.id} while a run ${run.id} is active.`, type: 'invalid_request_error' },
    });
    await openai.beta.threads.runs.cancel(run.id, { thread_id: thread.id });
    await openai.beta.threads.runs.poll(run.id, { thread_id: thread.id }, { pollIntervalMs: 20 });
    expect((await openai.beta.threads.delete(thread.id)).deleted).toBe(true);
  });
});
