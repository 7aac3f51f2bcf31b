/**
 * A runs body is parsed by its contract once per request: the REST row parses it, and the GraphQL
 * resolver behind the row takes that parsed body (schema/contract-input.ts, parsedInput) instead of
 * parsing its re-keyed input again. A GraphQL call still parses its input with the contract.
 */
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { runExecutor } from '../../src/modules/runs/executor.js';
import { runsContract as contract } from '../../schema/contracts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { H } from '../helpers/run-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
afterEach(async () => {
  vi.restoreAllMocks();
  await runExecutor(t.app.runtime).whenIdle();
});

const messages = [{ role: 'user', content: 'Say something short.' }];

it('REST: the resolver does not parse a body its row has parsed, and gets the parsed values', async () => {
  const assistant = (await t.request('POST', '/v1/assistants', { body: { model: 'local-test' }, headers: H })).body;
  const contractParse = vi.spyOn(contract.createThreadAndRunContract, 'safeParse');
  const response = await t.request('POST', '/v1/threads/runs', {
    body: { assistant_id: assistant.id, thread: { messages }, metadata: { via: 'rest' }, truncation_strategy: { type: 'last_messages', last_messages: 3 } },
    headers: H,
  });
  expect(response.status).toBe(200);
  expect(contractParse).not.toHaveBeenCalled();
  // What the contract makes of the body (defaults, transforms) reached the run.
  expect(response.body).toMatchObject({ metadata: { via: 'rest' }, truncation_strategy: { type: 'last_messages', last_messages: 3 }, tool_choice: 'auto', parallel_tool_calls: true });
  const thread = await t.request('GET', `/v1/threads/${response.body.thread_id}/messages`, { headers: H });
  expect(thread.body.data.map((m: { content: unknown }) => m.content)).toContainEqual([{ type: 'text', text: { value: 'Say something short.', annotations: [] } }]);
});

it('REST: a body the contract refuses is refused by the row, with the contract\'s error', async () => {
  const assistant = (await t.request('POST', '/v1/assistants', { body: { model: 'local-test' }, headers: H })).body;
  const response = await t.request('POST', '/v1/threads/runs', { body: { assistant_id: assistant.id, thread: { messages }, top_p: 3 }, headers: H });
  expect(response.status).toBe(400);
  expect(response.body.error.param).toBe('top_p');
});

it('GraphQL: the resolver parses its input with the contract', async () => {
  const assistant = (await t.request('POST', '/v1/assistants', { body: { model: 'local-test' }, headers: H })).body;
  const contractParse = vi.spyOn(contract.createThreadAndRunContract, 'safeParse');
  const result = await t.graphql('mutation($i: CreateThreadAndRunInput!) { createThreadAndRun(input: $i, virtualKey: "local") { id status } }', {
    i: { assistantId: assistant.id, thread: { messages } },
  });
  expect(result.errors).toBeUndefined();
  expect(contractParse).toHaveBeenCalledTimes(1);
  const refused = await t.graphql('mutation($i: CreateThreadAndRunInput!) { createThreadAndRun(input: $i, virtualKey: "local") { id } }', {
    i: { assistantId: assistant.id, topP: 3 },
  });
  expect(refused.errors?.[0]?.extensions?.param).toBe('top_p');
});
