/**
 * The runs contract over REST (docs/contract.md#runs): exact error bodies (message, type, param, code),
 * statuses, the run object's shape, one active run per thread, the limits of run inputs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { error } from '../helpers/errors.js';
import { createWorkspaceWithKey } from '../helpers/tenants.js';
import { BETA, H, assistant, ok, startRun, thread, waitFor, waitingRun, weatherTool } from '../helpers/run-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const submitPath = (threadId: string, runId: string) => `/v1/threads/${threadId}/runs/${runId}/submit_tool_outputs`;

describe('headers', () => {
  it('run routes need the beta header: 400 invalid_beta', async () => {
    const message = "This route needs the beta header 'Vendor-Beta: assistants=v2' (or 'OpenAI-Beta: assistants=v2').";
    for (const headers of [{}, { 'OpenAI-Beta': 'assistants=v1' }, { 'Vendor-Beta': 'other' }] as Record<string, string>[]) {
      const r = await t.request('POST', '/v1/assistants', { body: { model: 'm' }, headers });
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/application\/json/);
      expect(r.body).toEqual(error(message, null, 'invalid_beta'));
    }
    const r = await t.request('GET', '/v1/threads/thread_x/runs/run_x/events', {});
    expect(r.body.error.code).toBe('invalid_beta');
  });

  it('accepts Vendor-Beta, OpenAI-Beta and a list that contains assistants=v2', async () => {
    for (const headers of [{ 'Vendor-Beta': 'assistants=v2' }, { 'OpenAI-Beta': 'assistants=v2' }, { 'OpenAI-Beta': 'other=v1, assistants=v2' }] as Record<string, string>[]) {
      expect((await t.request('POST', '/v1/assistants', { body: { model: 'm' }, headers })).status).toBe(200);
    }
  });

  it('the API key still comes first: 401 without one', async () => {
    const r = await t.request('POST', '/v1/assistants', { body: { model: 'm' }, headers: BETA, key: null });
    expect(r.status).toBe(401);
  });

  it('model work needs a virtual key: missing → 400, unknown → 404', async () => {
    const a = await assistant(t);
    const th = await thread(t, 'hi');
    const missing = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id }, headers: BETA });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(
      error('Missing virtual key: send the x-gateway-virtual-key header with the slug of a provider in your workspace (for example `local`).', null, 'missing_virtual_key'),
    );
    const unknown = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id }, headers: { ...BETA, 'x-gateway-virtual-key': 'nope' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('virtual_key_not_found');
    // The portkey spelling is accepted too.
    const portkey = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id }, headers: { ...BETA, 'x-portkey-virtual-key': 'local' } });
    expect(portkey.status).toBe(200);
  });
});

describe('objects', () => {
  it('a run has every field of an OpenAI run, nullable ones as null', async () => {
    const { run } = await startRun(t, 'hello');
    expect(Object.keys(run).sort()).toEqual(
      [
        'id', 'object', 'created_at', 'thread_id', 'assistant_id', 'status', 'required_action', 'last_error', 'expires_at',
        'started_at', 'cancelled_at', 'failed_at', 'completed_at', 'incomplete_details', 'model', 'instructions', 'tools',
        'metadata', 'usage', 'max_prompt_tokens', 'max_completion_tokens', 'truncation_strategy', 'tool_choice',
        'parallel_tool_calls', 'response_format', 'temperature', 'top_p',
      ].sort(),
    );
    expect(run).toMatchObject({
      object: 'thread.run',
      status: 'queued',
      required_action: null,
      last_error: null,
      started_at: null,
      usage: null,
      incomplete_details: null,
      truncation_strategy: { type: 'auto', last_messages: null },
      tool_choice: 'auto',
      parallel_tool_calls: true,
      response_format: 'auto',
      temperature: 1,
      top_p: 1,
    });
    expect(run.id).toMatch(/^run_[A-Za-z0-9]{24}$/);
    expect(run.expires_at).toBe(run.created_at + 600);
    const done = await waitFor(t, run.thread_id, run.id, ['completed']);
    expect(done.expires_at).toBeNull();
    expect(done.usage).toEqual({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
      total_tokens: done.usage.prompt_tokens + done.usage.completion_tokens,
    });
  });

  it('404s name the id', async () => {
    expect((await t.request('GET', '/v1/threads/thread_nope', { headers: BETA })).body).toEqual(error("No thread found with id 'thread_nope'."));
    expect((await t.request('GET', '/v1/assistants/asst_nope', { headers: BETA })).body).toEqual(error("No assistant found with id 'asst_nope'."));
    const th = await thread(t);
    const r = await t.request('GET', `/v1/threads/${th.id}/runs/run_nope`, { headers: BETA });
    expect(r.status).toBe(404);
    expect(r.body).toEqual(error("No run found with id 'run_nope'."));
  });

  it('lists are OpenAI list objects with cursors', async () => {
    const th = await thread(t);
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three']) ids.push((await ok(t, 'POST', `/v1/threads/${th.id}/messages`, { role: 'user', content: text })).id);
    const all = await ok(t, 'GET', `/v1/threads/${th.id}/messages`, undefined, BETA);
    expect(all).toMatchObject({ object: 'list', first_id: ids[2], last_id: ids[0], has_more: false });
    expect(all.data.map((m: any) => m.id)).toEqual([...ids].reverse());
    const page1 = await ok(t, 'GET', `/v1/threads/${th.id}/messages?order=asc&limit=2`, undefined, BETA);
    expect(page1).toMatchObject({ first_id: ids[0], last_id: ids[1], has_more: true });
    const page2 = await ok(t, 'GET', `/v1/threads/${th.id}/messages?order=asc&limit=2&after=${ids[1]}`, undefined, BETA);
    expect(page2).toMatchObject({ first_id: ids[2], last_id: ids[2], has_more: false });
    const before = await ok(t, 'GET', `/v1/threads/${th.id}/messages?order=asc&limit=1&before=${ids[2]}`, undefined, BETA);
    expect(before.data.map((m: any) => m.id)).toEqual([ids[1]]);
    const bad = await t.request('GET', `/v1/threads/${th.id}/messages?limit=101`, { headers: BETA });
    expect(bad.body).toEqual(error("Invalid 'limit': integer above maximum value. Expected a value <= 100, but got 101 instead.", 'limit', 'integer_above_max_value'));
  });

  it('an empty page answers first_id and last_id as "" (the document requires strings)', async () => {
    const empty = { object: 'list', data: [], first_id: '', last_id: '', has_more: false };
    const other = await createWorkspaceWithKey(t, 'Empty lists');
    expect((await t.request('GET', '/v1/assistants', { headers: BETA, key: other.key })).body).toEqual(empty);
    const th = await thread(t);
    expect(await ok(t, 'GET', `/v1/threads/${th.id}/messages`, undefined, BETA)).toEqual(empty);
    expect(await ok(t, 'GET', `/v1/threads/${th.id}/runs`, undefined, BETA)).toEqual(empty);
    const { thread: ran, run } = await startRun(t, 'hello');
    await waitFor(t, ran.id, run.id, ['completed']);
    const steps = await ok(t, 'GET', `/v1/threads/${ran.id}/runs/${run.id}/steps?order=asc`, undefined, BETA);
    const last = steps.data.at(-1).id;
    expect(await ok(t, 'GET', `/v1/threads/${ran.id}/runs/${run.id}/steps?order=asc&after=${last}`, undefined, BETA)).toEqual(empty);
  });

  it('a workspace key does not see the default workspace’s threads (404)', async () => {
    const th = await thread(t, 'private');
    const ws = await ok(t, 'POST', '/v1/admin/workspaces', { name: 'Other team' }, {});
    const key = (await ok(t, 'POST', '/v1/admin/api-keys', { name: 'other', type: 'workspace', workspace_id: ws.id }, {})).key;
    const r = await t.request('GET', `/v1/threads/${th.id}`, { headers: BETA, key });
    expect(r.status).toBe(404);
    expect(r.body).toEqual(error(`No thread found with id '${th.id}'.`));
  });
});

describe('one active run per thread', () => {
  it('400 Thread <id> already has an active run <id>.', async () => {
    const { run } = await waitingRun(t);
    const a = run.assistant_id;
    const second = await t.request('POST', `/v1/threads/${run.thread_id}/runs`, { body: { assistant_id: a }, headers: H });
    expect(second.status).toBe(400);
    expect(second.body).toEqual(error(`Thread ${run.thread_id} already has an active run ${run.id}.`));
    const message = await t.request('POST', `/v1/threads/${run.thread_id}/messages`, { body: { role: 'user', content: 'more' }, headers: H });
    expect(message.body).toEqual(error(`Can't add messages to ${run.thread_id} while a run ${run.id} is active.`));
  });

  it('two racing creates on one thread: exactly one run', async () => {
    const a = await assistant(t);
    const th = await thread(t, 'hello');
    const results = await Promise.all([1, 2, 3].map(() => t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id }, headers: H })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });
});

describe('submit_tool_outputs', () => {
  it('output must be a string (exact message, param, code)', async () => {
    const { run, calls } = await waitingRun(t);
    const r = await t.request('POST', submitPath(run.thread_id, run.id), { body: { tool_outputs: [{ tool_call_id: calls[0].id, output: 42 }] }, headers: H });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(error("Invalid type for 'tool_outputs[0].output': expected a string, but got an integer instead.", 'tool_outputs[0].output', 'invalid_type'));
    const decimal = await t.request('POST', submitPath(run.thread_id, run.id), { body: { tool_outputs: [{ tool_call_id: calls[0].id, output: 1.5 }] }, headers: H });
    expect(decimal.body.error.message).toBe("Invalid type for 'tool_outputs[0].output': expected a string, but got a decimal instead.");
    const object = await t.request('POST', submitPath(run.thread_id, run.id), { body: { tool_outputs: [{ tool_call_id: calls[0].id, output: { a: 1 } }] }, headers: H });
    expect(object.body.error.message).toBe("Invalid type for 'tool_outputs[0].output': expected a string, but got an object instead.");
  });

  it('tool_outputs is required; any other key is refused', async () => {
    const { run } = await waitingRun(t);
    const missing = await t.request('POST', submitPath(run.thread_id, run.id), { body: {}, headers: H });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(error("Missing required parameter: 'tool_outputs'.", 'tool_outputs', 'missing_required_parameter'));
    const unknown = await t.request('POST', submitPath(run.thread_id, run.id), { body: { tool_outputs: [], x: 1 }, headers: H });
    expect(unknown.body).toEqual(error('Unrecognized request argument supplied: x', 'x', 'unknown_parameter'));
    // Nothing was accepted.
    expect((await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, undefined, BETA)).status).toBe('requires_action');
  });

  it('unknown thread, unknown run, run of another thread: 404', async () => {
    const { run, calls } = await waitingRun(t);
    const body = { tool_outputs: [{ tool_call_id: calls[0].id, output: 'x' }] };
    const noThread = await t.request('POST', submitPath('thread_missing', run.id), { body, headers: H });
    expect(noThread.status).toBe(404);
    expect(noThread.body).toEqual(error("No thread found with id 'thread_missing'."));
    const noRun = await t.request('POST', submitPath(run.thread_id, 'run_missing'), { body, headers: H });
    expect(noRun.status).toBe(404);
    expect(noRun.body).toEqual(error("No run found with id 'run_missing'."));
    const other = await thread(t);
    const elsewhere = await t.request('POST', submitPath(other.id, run.id), { body, headers: H });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual(error(`No run found with id '${run.id}'.`));
  });

  it('the submitted ids must equal the pending ones: missing, extra, repeated', async () => {
    const { run, calls } = await waitingRun(t, 'get_weather and get_time please');
    expect(calls).toHaveLength(2);
    const [a, b] = calls.map((c) => c.id);
    const cases: [string[], string][] = [
      [[a], `Expected tool outputs for call_ids ['${a}', '${b}'], got ['${a}']`],
      [[a, b, 'call_extra'], `Expected tool outputs for call_ids ['${a}', '${b}'], got ['${a}', '${b}', 'call_extra']`],
      [[a, a], `Expected tool outputs for call_ids ['${a}', '${b}'], got ['${a}', '${a}']`],
      [[], `Expected tool outputs for call_ids ['${a}', '${b}'], got []`],
    ];
    for (const [ids, message] of cases) {
      const r = await t.request('POST', submitPath(run.thread_id, run.id), { body: { tool_outputs: ids.map((id) => ({ tool_call_id: id, output: 'o' })) }, headers: H });
      expect(r.status).toBe(400);
      expect(r.body).toEqual(error(message));
    }
    // Any order is fine.
    const r = await t.request('POST', submitPath(run.thread_id, run.id), { body: { tool_outputs: [{ tool_call_id: b, output: '1' }, { tool_call_id: a, output: '2' }] }, headers: H });
    expect(r.status).toBe(200);
  });

  it('success: 200 JSON, the run queued with required_action null', async () => {
    const { run, calls } = await waitingRun(t);
    const r = await t.request('POST', submitPath(run.thread_id, run.id), { body: { tool_outputs: [{ tool_call_id: calls[0].id, output: 'sunny' }] }, headers: H });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(r.body).toMatchObject({ id: run.id, object: 'thread.run', status: 'queued', required_action: null, usage: null });
    expect(r.body).not.toHaveProperty('stream_after');
    const done = await waitFor(t, run.thread_id, run.id, ['completed']);
    expect(done.usage.total_tokens).toBeGreaterThan(0);
  });

  it('a run not waiting for outputs refuses them: 400 Runs in status "…"', async () => {
    const { run, calls } = await waitingRun(t);
    const body = { tool_outputs: [{ tool_call_id: calls[0].id, output: 'x' }] };
    expect((await t.request('POST', submitPath(run.thread_id, run.id), { body, headers: H })).status).toBe(200);
    const again = await t.request('POST', submitPath(run.thread_id, run.id), { body, headers: H });
    expect(again.status).toBe(400);
    expect(again.body.error.message).toMatch(/^Runs in status "(queued|in_progress|completed)" do not accept tool outputs\.$/);
    await waitFor(t, run.thread_id, run.id, ['completed']);
    const late = await t.request('POST', submitPath(run.thread_id, run.id), { body, headers: H });
    expect(late.body).toEqual(error('Runs in status "completed" do not accept tool outputs.'));
  });

  it('two racing submits: exactly one wins, the other gets the status 400', async () => {
    for (let round = 0; round < 3; round++) {
      const { run, calls } = await waitingRun(t);
      const body = { tool_outputs: [{ tool_call_id: calls[0].id, output: `r${round}` }] };
      const results = await Promise.all([1, 2, 3, 4].map(() => t.request('POST', submitPath(run.thread_id, run.id), { body, headers: H })));
      expect(results.filter((r) => r.status === 200)).toHaveLength(1);
      for (const loser of results.filter((r) => r.status !== 200)) {
        expect(loser.status).toBe(400);
        expect(loser.body.error.message).toMatch(/^Runs in status "(queued|in_progress|completed)" do not accept tool outputs\.$/);
      }
      const done = await waitFor(t, run.thread_id, run.id, ['completed']);
      const steps = await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}/steps?order=asc`, undefined, BETA);
      expect(steps.data.filter((s: any) => s.type === 'message_creation')).toHaveLength(1);
      expect(done.status).toBe('completed');
    }
  });

  it('the run must be submitted with its own virtual key', async () => {
    const { run, calls } = await waitingRun(t);
    const r = await t.request('POST', submitPath(run.thread_id, run.id), {
      body: { tool_outputs: [{ tool_call_id: calls[0].id, output: 'x' }] },
      headers: { ...BETA, 'x-gateway-virtual-key': 'other' },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(error(`Run ${run.id} was created with virtual key 'local': submit its tool outputs with the same virtual key.`, null, 'virtual_key_mismatch'));
  });
});

describe('limits and forms of run inputs', () => {
  let assistantId: string;
  let threadId: string;
  beforeAll(async () => {
    assistantId = (await assistant(t)).id;
    threadId = (await thread(t, 'hi')).id;
  });
  const create = (fields: Record<string, unknown>) => t.request('POST', `/v1/threads/${threadId}/runs`, { body: { assistant_id: assistantId, ...fields }, headers: H });
  const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'function', function: { name: `f${i}` } }));
  const metadata = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

  it.each([
    [{ tools: tools(21) }, "Invalid 'tools': array too long. Expected an array with maximum length 20, but got an array with length 21 instead.", 'tools', 'array_above_max_length'],
    [{ metadata: metadata(17) }, "Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with 17 properties instead.", 'metadata', 'object_above_max_properties'],
    [{ metadata: { ['k'.repeat(65)]: 'v' } }, "Invalid 'metadata': key too long. Expected a key with maximum length 64, but got a key with length 65 instead.", 'metadata', 'string_above_max_length'],
    [{ metadata: { k: 'v'.repeat(513) } }, "Invalid 'metadata.k': string too long. Expected a string with maximum length 512, but got a string with length 513 instead.", 'metadata.k', 'string_above_max_length'],
    [{ metadata: { k: 1 } }, "Invalid type for 'metadata.k': expected a string, but got an integer instead.", 'metadata.k', 'invalid_type'],
    [{ max_prompt_tokens: 255 }, "Invalid 'max_prompt_tokens': integer below minimum value. Expected a value >= 256, but got 255 instead.", 'max_prompt_tokens', 'integer_below_min_value'],
    [{ max_completion_tokens: 10 }, "Invalid 'max_completion_tokens': integer below minimum value. Expected a value >= 256, but got 10 instead.", 'max_completion_tokens', 'integer_below_min_value'],
    [{ temperature: 2.5 }, "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.", 'temperature', 'decimal_above_max_value'],
    [{ temperature: -1 }, "Invalid 'temperature': decimal below minimum value. Expected a value >= 0, but got -1 instead.", 'temperature', 'decimal_below_min_value'],
    [{ top_p: 1.1 }, "Invalid 'top_p': decimal above maximum value. Expected a value <= 1, but got 1.1 instead.", 'top_p', 'decimal_above_max_value'],
    [{ temperature: 'hot' }, "Invalid type for 'temperature': expected a number, but got a string instead.", 'temperature', 'invalid_type'],
    [{ tool_choice: 'sometimes' }, "Invalid value: 'sometimes'. Supported values are: 'none', 'auto' and 'required'.", 'tool_choice', 'invalid_value'],
    [{ tool_choice: { type: 'function', function: { name: 'nope' } } }, "Invalid 'tool_choice.function.name': no function named 'nope' among the run's tools.", 'tool_choice.function.name', 'invalid_value'],
    [{ response_format: { type: 'xml' } }, "Invalid value: 'xml'. Supported values are: 'text', 'json_object' and 'json_schema'.", 'response_format.type', 'invalid_value'],
    [{ response_format: 'json' }, "Invalid value: 'json'. Supported values are: 'auto' and 'none'.", 'response_format', 'invalid_value'],
    [{ truncation_strategy: { type: 'last_messages' } }, "Missing required parameter: 'truncation_strategy.last_messages'.", 'truncation_strategy.last_messages', 'missing_required_parameter'],
    [{ truncation_strategy: { type: 'first' } }, "Invalid value: 'first'. Supported values are: 'auto' and 'last_messages'.", 'truncation_strategy.type', 'invalid_value'],
    [{ tools: [{ type: 'function', function: { name: 'bad name' } }] }, "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.", 'tools[0].function.name', 'invalid_value'],
    [{ assistant_id: undefined }, "Missing required parameter: 'assistant_id'.", 'assistant_id', 'missing_required_parameter'],
  ])('%j → 400', async (fields, message, param, code) => {
    const r = await create(fields as Record<string, unknown>);
    expect(r.status).toBe(400);
    expect(r.body).toEqual(error(message as string, param as string, code as string));
  });

  it('accepts the limits themselves and every tool_choice / response_format form', async () => {
    const valid: Record<string, unknown>[] = [
      { tools: tools(20), metadata: { ...metadata(15), ['k'.repeat(64)]: 'v'.repeat(512) }, max_prompt_tokens: 256, max_completion_tokens: 256, temperature: 2, top_p: 0 },
      { tool_choice: 'none', response_format: { type: 'json_object' } },
      { tool_choice: 'required', response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } },
      { tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'get_weather' } }, truncation_strategy: { type: 'last_messages', last_messages: 3 } },
    ];
    for (const fields of valid) {
      const th = await thread(t, 'hi');
      const r = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: assistantId, ...fields }, headers: H });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
  });

  it('assistants and messages are validated the same way', async () => {
    const a = await t.request('POST', '/v1/assistants', { body: { model: 'm', tools: tools(21) }, headers: BETA });
    expect(a.body.error.param).toBe('tools');
    const noModel = await t.request('POST', '/v1/assistants', { body: {}, headers: BETA });
    expect(noModel.body).toEqual(error("Missing required parameter: 'model'.", 'model', 'missing_required_parameter'));
    const th = await thread(t);
    const role = await t.request('POST', `/v1/threads/${th.id}/messages`, { body: { role: 'system', content: 'x' }, headers: BETA });
    expect(role.body).toEqual(error("Invalid value: 'system'. Supported values are: 'user' and 'assistant'.", 'role', 'invalid_value'));
    const content = await t.request('POST', `/v1/threads/${th.id}/messages`, { body: { role: 'user' }, headers: BETA });
    expect(content.body).toEqual(error("Missing required parameter: 'content'.", 'content', 'missing_required_parameter'));
  });
});

describe('local model behaviour', () => {
  it('calls only the first named function when parallel_tool_calls is false; required always calls', async () => {
    const one = await startRun(t, 'get_weather and get_time', { parallel_tool_calls: false });
    const waiting = await waitFor(t, one.thread.id, one.run.id, ['requires_action']);
    expect(waiting.required_action.submit_tool_outputs.tool_calls.map((c: any) => c.function.name)).toEqual(['get_weather']);
    const required = await startRun(t, 'nothing named here', { tool_choice: 'required' });
    const forced = await waitFor(t, required.thread.id, required.run.id, ['requires_action']);
    expect(forced.required_action.submit_tool_outputs.tool_calls.map((c: any) => c.function.name)).toEqual(['get_weather']);
    const none = await startRun(t, 'get_weather please', { tool_choice: 'none' });
    expect((await waitFor(t, none.thread.id, none.run.id, ['completed', 'requires_action'])).status).toBe('completed');
  });

  it('max_completion_tokens cuts the answer: incomplete with reason max_completion_tokens', async () => {
    const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const { thread: th, run } = await startRun(t, long, { max_completion_tokens: 256 });
    const done = await waitFor(t, th.id, run.id, ['incomplete', 'completed']);
    expect(done.status).toBe('incomplete');
    expect(done.incomplete_details).toEqual({ reason: 'max_completion_tokens' });
    expect(done.usage.completion_tokens).toBe(256);
    expect(done.expires_at).toBeNull();
    const messages = await ok(t, 'GET', `/v1/threads/${th.id}/messages?run_id=${run.id}`, undefined, BETA);
    expect(messages.data[0]).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_tokens' } });
  });

  it('max_prompt_tokens drops old messages; a single message too large ends incomplete', async () => {
    const huge = Array.from({ length: 600 }, (_, i) => `w${i}`).join(' ');
    const { thread: th, run } = await startRun(t, huge, { max_prompt_tokens: 256 });
    const done = await waitFor(t, th.id, run.id, ['incomplete', 'completed']);
    expect(done).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_prompt_tokens' } });
  });

  it('JSON mode answers valid JSON', async () => {
    const { thread: th, run } = await startRun(t, 'hi json', { response_format: { type: 'json_object' } });
    await waitFor(t, th.id, run.id, ['completed']);
    const messages = await ok(t, 'GET', `/v1/threads/${th.id}/messages?run_id=${run.id}`, undefined, BETA);
    expect(JSON.parse(messages.data[0].content[0].text.value)).toEqual({ message: 'You said: hi json' });
  });
});

describe('create thread and run', () => {
  it('POST /v1/threads/runs creates both; GET /threads/{id} shows the thread', async () => {
    const a = await assistant(t);
    const run = await ok(t, 'POST', '/v1/threads/runs', { assistant_id: a.id, thread: { messages: [{ role: 'user', content: 'hey' }], metadata: { k: 'v' } } });
    expect(run).toMatchObject({ object: 'thread.run', status: 'queued' });
    const th = await ok(t, 'GET', `/v1/threads/${run.thread_id}`, undefined, BETA);
    expect(th).toMatchObject({ id: run.thread_id, object: 'thread', metadata: { k: 'v' } });
    await waitFor(t, run.thread_id, run.id, ['completed']);
    const bad = await t.request('POST', '/v1/threads/runs', { body: { assistant_id: a.id, thread: { messages: [{ role: 'user' }] } }, headers: H });
    expect(bad.body).toEqual(error("Missing required parameter: 'thread.messages[0].content'.", 'thread.messages[0].content', 'missing_required_parameter'));
  });
});
