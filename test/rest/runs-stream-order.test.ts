/**
 * POST /v1/threads/runs with `stream: true`: the whole ordered event list (with the
 * payloads, under a manual clock) for a run that answers in text and for one that calls a tool,
 * compared with POST /v1/threads/{id}/runs (the same list after `thread.created`); and SSE
 * keep-alives from SSE_KEEPALIVE_MS in a real run stream whose model is slow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, unixSeconds } from '../../src/lib/clock.js';
import type { ModelAdapter } from '../../src/modules/runs/models/model.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BETA, H, assistant, names, ok, parseSse, thread, timeTool, useLocalModel, weatherTool, type SseMessage } from '../helpers/run-fixtures.js';

const NOW = new Date('2026-03-01T10:00:00.000Z');
const T = unixSeconds(NOW);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({}, { clock: new ManualClock(NOW) });
});
afterAll(() => t.close());

const data = (m: SseMessage) => JSON.parse(m.data);

/** A run object as the wire shows it, with this test's defaults. */
function runBody(fields: Record<string, unknown>) {
  return {
    object: 'thread.run',
    created_at: T,
    status: 'queued',
    required_action: null,
    last_error: null,
    expires_at: T + 600,
    started_at: null,
    cancelled_at: null,
    failed_at: null,
    completed_at: null,
    incomplete_details: null,
    model: 'local-test',
    instructions: '',
    tools: [],
    metadata: {},
    usage: null,
    max_prompt_tokens: null,
    max_completion_tokens: null,
    truncation_strategy: { type: 'auto', last_messages: null },
    tool_choice: 'auto',
    parallel_tool_calls: true,
    response_format: 'auto',
    temperature: 1,
    top_p: 1,
    ...fields,
  };
}

function stepBody(fields: Record<string, unknown>) {
  return {
    object: 'thread.run.step',
    created_at: T,
    status: 'in_progress',
    last_error: null,
    expired_at: null,
    cancelled_at: null,
    failed_at: null,
    completed_at: null,
    metadata: {},
    usage: null,
    ...fields,
  };
}

function messageBody(fields: Record<string, unknown>) {
  return {
    object: 'thread.message',
    created_at: T,
    status: 'in_progress',
    incomplete_details: null,
    completed_at: null,
    incomplete_at: null,
    role: 'assistant',
    content: [],
    attachments: [],
    metadata: {},
    ...fields,
  };
}

describe('POST /v1/threads/runs with stream: true', () => {
  it('a text answer: every event in order, with whole payloads, ids 1…n, then done', async () => {
    const a = await assistant(t, { tools: [] });
    const r = await t.request('POST', '/v1/threads/runs', {
      body: { assistant_id: a.id, stream: true, thread: { messages: [{ role: 'user', content: 'hi there' }], metadata: { via: 'sse' } } },
      headers: H,
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const messages = parseSse(r.text);
    expect(names(messages)).toEqual([
      'thread.created',
      'thread.run.created',
      'thread.run.queued',
      'thread.run.in_progress',
      'thread.run.step.created',
      'thread.run.step.in_progress',
      'thread.message.created',
      'thread.message.in_progress',
      'thread.message.delta',
      'thread.message.delta',
      'thread.message.completed',
      'thread.run.step.completed',
      'thread.run.completed',
      'done',
    ]);
    expect(messages.slice(0, -1).map((m) => m.id)).toEqual(messages.slice(0, -1).map((_, i) => String(i + 1)));
    expect(messages.at(-1)).toEqual({ event: 'done', data: '[DONE]' });

    const threadId = data(messages[0]).id;
    const runId = data(messages[1]).id;
    const stepId = data(messages[4]).id;
    const messageId = data(messages[6]).id;
    expect(threadId).toMatch(/^thread_[A-Za-z0-9]{24}$/);
    expect(stepId).toMatch(/^step_[A-Za-z0-9]{24}$/);
    expect(messageId).toMatch(/^msg_[A-Za-z0-9]{24}$/);
    const ids = { id: runId, thread_id: threadId, assistant_id: a.id };
    const usage = { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 };
    const step = (fields: Record<string, unknown>) =>
      stepBody({
        id: stepId,
        run_id: runId,
        assistant_id: a.id,
        thread_id: threadId,
        type: 'message_creation',
        step_details: { type: 'message_creation', message_creation: { message_id: messageId } },
        ...fields,
      });
    const message = (fields: Record<string, unknown>) => messageBody({ id: messageId, thread_id: threadId, assistant_id: a.id, run_id: runId, ...fields });
    const delta = (value: string) => ({ id: messageId, object: 'thread.message.delta', delta: { content: [{ index: 0, type: 'text', text: { value, annotations: [] } }] } });

    expect(messages.slice(0, -1).map(data)).toEqual([
      { id: threadId, object: 'thread', created_at: T, metadata: { via: 'sse' }, tool_resources: {} },
      runBody(ids),
      runBody(ids),
      runBody({ ...ids, status: 'in_progress', started_at: T }),
      step({}),
      step({}),
      message({}),
      message({}),
      delta('You said:'),
      delta(' hi there'),
      message({ status: 'completed', completed_at: T, content: [{ type: 'text', text: { value: 'You said: hi there', annotations: [] } }] }),
      step({ status: 'completed', completed_at: T, usage }),
      runBody({ ...ids, status: 'completed', started_at: T, completed_at: T, expires_at: null, usage }),
    ]);
    // The stream's last run event is what a read returns.
    expect(await ok(t, 'GET', `/v1/threads/${threadId}/runs/${runId}`, undefined, BETA)).toEqual(data(messages.at(-2)!));
  });

  it('a tool call: thread.created, the run events, the tool-calls step, requires_action, done', async () => {
    const a = await assistant(t);
    const r = await t.request('POST', '/v1/threads/runs', {
      body: { assistant_id: a.id, stream: true, thread: { messages: [{ role: 'user', content: 'get_weather now' }] } },
      headers: H,
    });
    const messages = parseSse(r.text);
    expect(names(messages)).toEqual([
      'thread.created',
      'thread.run.created',
      'thread.run.queued',
      'thread.run.in_progress',
      'thread.run.step.created',
      'thread.run.step.in_progress',
      'thread.run.requires_action',
      'done',
    ]);
    const threadId = data(messages[0]).id;
    const runId = data(messages[1]).id;
    const step = data(messages[4]);
    const call = step.step_details.tool_calls[0];
    expect(call.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    const fn = { name: 'get_weather', arguments: JSON.stringify({ input: 'get_weather now' }) };
    // The step carries the usage of the model call that asked for the tools (already finished).
    expect(step.usage).toEqual({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: step.usage.prompt_tokens + step.usage.completion_tokens });
    expect(step.usage.completion_tokens).toBeGreaterThan(0);
    expect(step).toEqual(
      stepBody({
        id: step.id,
        run_id: runId,
        assistant_id: a.id,
        thread_id: threadId,
        type: 'tool_calls',
        step_details: { type: 'tool_calls', tool_calls: [{ id: call.id, type: 'function', function: { ...fn, output: null } }] },
        usage: step.usage,
      }),
    );
    expect(data(messages[5])).toEqual(step);
    expect(data(messages[6])).toEqual(
      runBody({
        id: runId,
        thread_id: threadId,
        assistant_id: a.id,
        status: 'requires_action',
        started_at: T,
        tools: [weatherTool, timeTool],
        required_action: { type: 'submit_tool_outputs', submit_tool_outputs: { tool_calls: [{ id: call.id, type: 'function', function: fn }] } },
      }),
    );
  });

  it('is the create-run order with thread.created in front (text and tool-call runs)', async () => {
    for (const [tools, text] of [
      [[], 'the same words for both routes'],
      [[weatherTool], 'get_weather here'],
    ] as const) {
      const a = await assistant(t, { tools });
      const both = await t.request('POST', '/v1/threads/runs', {
        body: { assistant_id: a.id, stream: true, thread: { messages: [{ role: 'user', content: text }] } },
        headers: H,
      });
      const th = await thread(t, text);
      const single = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id, stream: true }, headers: H });
      const bothEvents = parseSse(both.text);
      const singleEvents = parseSse(single.text);
      expect(names(bothEvents)).toEqual(['thread.created', ...names(singleEvents)]);
      // Same ids, shifted by one for thread.created.
      expect(bothEvents.slice(1, -1).map((m) => Number(m.id) - 1)).toEqual(singleEvents.slice(0, -1).map((m) => Number(m.id)));
    }
  });
});

describe('SSE_KEEPALIVE_MS in a real run stream', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp({ SSE_KEEPALIVE_MS: 100 });
  });
  afterAll(() => app.close());

  it('a slow model: `: ping` comments arrive while the run is idle, between whole events, and the order is intact', async () => {
    const slow: ModelAdapter = {
      async *stream() {
        await new Promise((resolve) => setTimeout(resolve, 450));
        yield { type: 'text_delta', text: 'finally' };
        yield { type: 'done', finishReason: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
      },
    };
    useLocalModel(app, () => slow);
    const a = await assistant(app, { tools: [] });
    const r = await app.request('POST', '/v1/threads/runs', {
      body: { assistant_id: a.id, stream: true, thread: { messages: [{ role: 'user', content: 'take your time' }] } },
      headers: H,
    });
    expect(r.status).toBe(200);
    const blocks = r.text.split('\n\n');
    expect(blocks.pop()).toBe('');
    // Every block is either a whole event or exactly one comment line.
    for (const block of blocks) expect(block === ': ping' || /^event: [a-z._]+\n(id: \d+\n)?data: .+$/.test(block)).toBe(true);
    const idle = blocks.slice(blocks.findIndex((b) => b.startsWith('event: thread.run.in_progress')) + 1, blocks.findIndex((b) => b.startsWith('event: thread.run.step.created')));
    expect(idle.length).toBeGreaterThanOrEqual(2);
    expect(new Set(idle)).toEqual(new Set([': ping']));
    expect(names(parseSse(r.text))).toEqual([
      'thread.created',
      'thread.run.created',
      'thread.run.queued',
      'thread.run.in_progress',
      'thread.run.step.created',
      'thread.run.step.in_progress',
      'thread.message.created',
      'thread.message.in_progress',
      'thread.message.delta',
      'thread.message.completed',
      'thread.run.step.completed',
      'thread.run.completed',
      'done',
    ]);
  });

  it('with the default (15 s) a quick run has no ping', async () => {
    const a = await assistant(t, { tools: [] });
    const r = await t.request('POST', '/v1/threads/runs', { body: { assistant_id: a.id, stream: true, thread: { messages: [{ role: 'user', content: 'quick' }] } }, headers: H });
    expect(r.text).not.toContain(': ping');
  });
});
