/**
 * SSE of runs: the exact event order for text, tool-call and failure runs, the
 * `id:` lines, validation errors as JSON, replay after Last-Event-ID, and a client that leaves
 * mid-stream while the run still completes and records its usage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError, type ModelAdapter } from '../../src/modules/runs/models/model.js';
import { LocalModel } from '../../src/modules/runs/models/local-model.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  BETA,
  H,
  TEXT_RUN_EVENTS,
  assistant,
  names,
  ok,
  parseSse,
  slowLocal,
  thread,
  useLocalModel,
  waitFor,
  waitingRun,
} from '../helpers/run-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** The event names with each run of deltas collapsed to `thread.message.delta+`. */
const collapseDeltas = (events: string[]) => {
  const first = events.indexOf('thread.message.delta');
  const last = events.lastIndexOf('thread.message.delta');
  expect(first).toBeGreaterThan(-1);
  expect(last - first + 1).toBeGreaterThan(1);
  expect(events.slice(first, last + 1).every((e) => e === 'thread.message.delta')).toBe(true);
  return [...events.slice(0, first), 'thread.message.delta+', ...events.slice(last + 1)];
};

function expectIds(messages: ReturnType<typeof parseSse>, from: number) {
  const body = messages.filter((m) => m.event !== 'done');
  expect(body.map((m) => Number(m.id))).toEqual(body.map((_, i) => from + i));
  expect(messages.at(-1)).toEqual({ event: 'done', data: '[DONE]' });
}

describe('create run with stream: true', () => {
  it('a text run: created, queued, in_progress, step, message, deltas, completed, done', async () => {
    const a = await assistant(t, { tools: [] });
    const th = await thread(t, 'hello streaming world, say something long enough');
    const r = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id, stream: true }, headers: H });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const messages = parseSse(r.text);
    expect(collapseDeltas(names(messages))).toEqual([
      'thread.run.created',
      'thread.run.queued',
      'thread.run.in_progress',
      ...TEXT_RUN_EVENTS,
      'thread.message.delta+',
      'thread.message.completed',
      'thread.run.step.completed',
      'thread.run.completed',
      'done',
    ]);
    expectIds(messages, 1);
    const deltas = messages.filter((m) => m.event === 'thread.message.delta').map((m) => JSON.parse(m.data));
    for (const delta of deltas) {
      expect(delta).toMatchObject({ object: 'thread.message.delta', delta: { content: [{ index: 0, type: 'text', text: { value: expect.any(String) } }] } });
    }
    expect(deltas.map((d) => d.delta.content[0].text.value).join('')).toBe('You said: hello streaming world, say something long enough');
    const completed = JSON.parse(messages.find((m) => m.event === 'thread.run.completed')!.data);
    expect(completed).toMatchObject({ status: 'completed', expires_at: null, usage: { total_tokens: expect.any(Number) } });
  });

  it('a tool-call run: …, the tool-calls step events, requires_action, done', async () => {
    const a = await assistant(t);
    const th = await thread(t, 'get_weather for Berlin');
    const r = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id, stream: true }, headers: H });
    const messages = parseSse(r.text);
    expect(names(messages)).toEqual([
      'thread.run.created',
      'thread.run.queued',
      'thread.run.in_progress',
      'thread.run.step.created',
      'thread.run.step.in_progress',
      'thread.run.requires_action',
      'done',
    ]);
    const step = JSON.parse(messages[3].data);
    expect(step).toMatchObject({ object: 'thread.run.step', type: 'tool_calls', status: 'in_progress' });
    expect(step.step_details.tool_calls[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', output: null } });
  });

  it('POST /threads/runs starts with thread.created', async () => {
    const a = await assistant(t, { tools: [] });
    const r = await t.request('POST', '/v1/threads/runs', { body: { assistant_id: a.id, stream: true, thread: { messages: [{ role: 'user', content: 'hi' }] } }, headers: H });
    const events = names(parseSse(r.text));
    expect(events.slice(0, 3)).toEqual(['thread.created', 'thread.run.created', 'thread.run.queued']);
    expect(events.slice(-2)).toEqual(['thread.run.completed', 'done']);
  });

  it('validation failures stay JSON errors', async () => {
    const a = await assistant(t);
    const th = await thread(t, 'x');
    const r = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id, stream: true, temperature: 9 }, headers: H });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(r.body.error.param).toBe('temperature');
  });
});

describe('submit_tool_outputs with stream: true', () => {
  it('exact order for a run that then answers in text', async () => {
    const { run, calls } = await waitingRun(t);
    const before = await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, undefined, BETA);
    const r = await t.request('POST', `/v1/threads/${run.thread_id}/runs/${run.id}/submit_tool_outputs`, {
      body: { tool_outputs: [{ tool_call_id: calls[0].id, output: 'It is 12 degrees' }], stream: true },
      headers: H,
    });
    expect(r.status).toBe(200);
    const messages = parseSse(r.text);
    expect(collapseDeltas(names(messages))).toEqual([
      'thread.run.step.completed',
      'thread.run.queued',
      'thread.run.in_progress',
      'thread.run.step.created',
      'thread.run.step.in_progress',
      'thread.message.created',
      'thread.message.in_progress',
      'thread.message.delta+',
      'thread.message.completed',
      'thread.run.step.completed',
      'thread.run.completed',
      'done',
    ]);
    // The first event is the tool-calls step with its output filled in; ids continue the log.
    const step = JSON.parse(messages[0].data);
    expect(step).toMatchObject({ type: 'tool_calls', status: 'completed' });
    expect(step.step_details.tool_calls[0].function.output).toBe('It is 12 degrees');
    expect(Number(messages[0].id)).toBe(7);
    expectIds(messages, 7);
    expect(before.status).toBe('requires_action');
    const text = messages.filter((m) => m.event === 'thread.message.delta').map((m) => JSON.parse(m.data).delta.content[0].text.value).join('');
    expect(text).toBe('Tool results: get_weather: It is 12 degrees');
  });

  it('a run that calls tools again ends with the step events, requires_action and done', async () => {
    // A model that asks for tools every time (the local one answers after outputs).
    useLocalModel(t, () => ({
      async *stream() {
        yield { type: 'tool_calls', calls: [{ id: `call_${'a'.repeat(20)}${Math.floor(Math.random() * 9000 + 1000)}`, name: 'get_weather', arguments: '{}' }] };
        yield { type: 'done', finishReason: 'tool_calls', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
      },
    }));
    try {
      const { run, calls } = await waitingRun(t);
      const r = await t.request('POST', `/v1/threads/${run.thread_id}/runs/${run.id}/submit_tool_outputs`, {
        body: { tool_outputs: [{ tool_call_id: calls[0].id, output: 'x' }], stream: true },
        headers: H,
      });
      expect(names(parseSse(r.text))).toEqual([
        'thread.run.step.completed',
        'thread.run.queued',
        'thread.run.in_progress',
        'thread.run.step.created',
        'thread.run.step.in_progress',
        'thread.run.requires_action',
        'done',
      ]);
    } finally {
      useLocalModel(t, () => new LocalModel());
    }
  });

  it('a failing model ends with thread.run.failed and done; last_error is server_error', async () => {
    const { run, calls } = await waitingRun(t);
    useLocalModel(t, () => failing(new ModelError('server_error', 'The model provider answered HTTP 500.')));
    try {
      const r = await t.request('POST', `/v1/threads/${run.thread_id}/runs/${run.id}/submit_tool_outputs`, {
        body: { tool_outputs: [{ tool_call_id: calls[0].id, output: 'x' }], stream: true },
        headers: H,
      });
      const messages = parseSse(r.text);
      expect(names(messages)).toEqual(['thread.run.step.completed', 'thread.run.queued', 'thread.run.in_progress', 'thread.run.failed', 'done']);
      const failed = JSON.parse(messages[3].data);
      expect(failed).toMatchObject({ status: 'failed', last_error: { code: 'server_error', message: 'The model provider answered HTTP 500.' }, expires_at: null });
      expect(failed.failed_at).toEqual(expect.any(Number));
      expect(failed.usage).toEqual(expect.objectContaining({ total_tokens: expect.any(Number) }));
    } finally {
      useLocalModel(t, () => new LocalModel());
    }
  });

  it('a model failing mid-answer closes the message incomplete and the step failed', async () => {
    useLocalModel(t, () => ({
      async *stream() {
        yield { type: 'text_delta', text: 'Partial ' };
        yield { type: 'text_delta', text: 'answer' };
        throw new ModelError('rate_limit_exceeded', "The model provider's rate limit was reached.");
      },
    }));
    try {
      const a = await assistant(t, { tools: [] });
      const th = await thread(t, 'x');
      const r = await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id, stream: true }, headers: H });
      const messages = parseSse(r.text);
      expect(names(messages).slice(-5)).toEqual(['thread.message.delta', 'thread.message.incomplete', 'thread.run.step.failed', 'thread.run.failed', 'done']);
      const failed = JSON.parse(messages.at(-2)!.data);
      expect(failed.last_error).toEqual({ code: 'rate_limit_exceeded', message: "The model provider's rate limit was reached." });
      const message = JSON.parse(messages.find((m) => m.event === 'thread.message.incomplete')!.data);
      expect(message).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'run_failed' }, content: [{ text: { value: 'Partial answer' } }] });
    } finally {
      useLocalModel(t, () => new LocalModel());
    }
  });
});

describe('GET /v1/threads/{thread_id}/runs/{run_id}/events', () => {
  it('replays after Last-Event-ID (or ?after=) and ends with done', async () => {
    const a = await assistant(t, { tools: [] });
    const th = await thread(t, 'replay me please');
    const full = parseSse((await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id, stream: true }, headers: H })).text);
    const runId = JSON.parse(full[0].data).id;
    const path = `/v1/threads/${th.id}/runs/${runId}/events`;

    const all = await t.request('GET', path, { headers: BETA });
    expect(all.status).toBe(200);
    expect(all.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(parseSse(all.text)).toEqual(full);

    const resumed = parseSse((await t.request('GET', path, { headers: { ...BETA, 'Last-Event-ID': '5' } })).text);
    expect(resumed).toEqual(full.slice(5));
    expect(resumed[0].id).toBe('6');
    expect(parseSse((await t.request('GET', `${path}?after=7`, { headers: BETA })).text)).toEqual(full.slice(7));
    // Header wins over the query; after the last event there is only done.
    const lastId = full.at(-2)!.id!;
    expect(parseSse((await t.request('GET', `${path}?after=1`, { headers: { ...BETA, 'Last-Event-ID': lastId } })).text)).toEqual([{ event: 'done', data: '[DONE]' }]);
  });

  it('follows a live run to the end with no gap and no duplicate', async () => {
    slowLocal(t, { delayMs: 15, tokensPerDelta: 1 });
    try {
      const a = await assistant(t, { tools: [] });
      const th = await thread(t, 'one two three four five six seven eight');
      const run = await ok(t, 'POST', `/v1/threads/${th.id}/runs`, { assistant_id: a.id });
      await waitFor(t, th.id, run.id, ['in_progress']);
      await new Promise((r) => setTimeout(r, 60));
      const live = parseSse((await t.request('GET', `/v1/threads/${th.id}/runs/${run.id}/events?after=2`, { headers: BETA })).text);
      expectIds(live, 3);
      expect(names(live).slice(-2)).toEqual(['thread.run.completed', 'done']);
    } finally {
      useLocalModel(t, () => new LocalModel());
    }
  });

  it('a late or duplicate publication is never sent twice, and never out of order', async () => {
    slowLocal(t, { delayMs: 15, tokensPerDelta: 1 });
    try {
      const a = await assistant(t, { tools: [] });
      const th = await thread(t, 'alpha beta gamma delta epsilon zeta eta theta');
      const run = await ok(t, 'POST', `/v1/threads/${th.id}/runs`, { assistant_id: a.id });
      await waitFor(t, th.id, run.id, ['in_progress']);
      const reading = t.request('GET', `/v1/threads/${th.id}/runs/${run.id}/events`, { headers: BETA });
      const topic = `runEvents:${run.id}`;
      for (let i = 0; i < 100 && t.app.runtime.pubsub.listenerCount(topic) === 0; i++) await new Promise((r) => setTimeout(r, 2));
      // Replays of what was already sent, and an event from the future that is not in the log.
      for (const sequence of [1, 2, 3]) t.app.runtime.pubsub.publish(topic, { sequence, event: 'thread.run.duplicate', data: {} });
      t.app.runtime.pubsub.publish(topic, { sequence: 10_000, event: 'thread.run.phantom', data: {} });
      const messages = parseSse((await reading).text);
      expectIds(messages, 1);
      expect(names(messages)).not.toContain('thread.run.duplicate');
      expect(names(messages)).not.toContain('thread.run.phantom');
      expect(names(messages).slice(-2)).toEqual(['thread.run.completed', 'done']);
    } finally {
      useLocalModel(t, () => new LocalModel());
    }
  });

  it('ends at requires_action when the run waits, and resumes after it', async () => {
    const { run, calls } = await waitingRun(t);
    const path = `/v1/threads/${run.thread_id}/runs/${run.id}/events`;
    const first = parseSse((await t.request('GET', path, { headers: BETA })).text);
    expect(names(first).slice(-2)).toEqual(['thread.run.requires_action', 'done']);
    await ok(t, 'POST', `/v1/threads/${run.thread_id}/runs/${run.id}/submit_tool_outputs`, { tool_outputs: [{ tool_call_id: calls[0].id, output: 'ok' }] });
    const rest = parseSse((await t.request('GET', path, { headers: { ...BETA, 'Last-Event-ID': first.at(-2)!.id! } })).text);
    expect(names(rest)[0]).toBe('thread.run.step.completed');
    expect(names(rest).slice(-2)).toEqual(['thread.run.completed', 'done']);
    // A replay from the start of a finished run goes through the whole log.
    const whole = parseSse((await t.request('GET', path, { headers: BETA })).text);
    expect(whole.length).toBe(first.length - 1 + rest.length);
  });

  it('404 for an unknown run; 400 for a bad Last-Event-ID', async () => {
    const th = await thread(t);
    const r = await t.request('GET', `/v1/threads/${th.id}/runs/run_missing/events`, { headers: BETA });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toBe("No run found with id 'run_missing'.");
    const bad = await t.request('GET', `/v1/threads/${th.id}/runs/run_missing/events`, { headers: { ...BETA, 'Last-Event-ID': 'abc' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_value', param: 'Last-Event-ID' });
  });
});

describe('a client that disconnects', () => {
  it('does not stop the run: it completes and records its usage', async () => {
    slowLocal(t, { delayMs: 20, tokensPerDelta: 1 });
    try {
      const base = await t.listen();
      const a = await assistant(t, { tools: [] });
      const th = await thread(t, 'a b c d e f g h i j k l m n o p');
      const controller = new AbortController();
      const response = await fetch(`${base}/v1/threads/${th.id}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': t.key, ...H },
        body: JSON.stringify({ assistant_id: a.id, stream: true }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      let text = '';
      while (!text.includes('thread.message.delta')) text += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      const runId = JSON.parse(parseSse(text)[0].data).id;
      const done = await waitFor(t, th.id, runId, ['completed', 'failed', 'cancelled']);
      expect(done.status).toBe('completed');
      expect(done.usage.completion_tokens).toBeGreaterThan(10);
      const messages = await ok(t, 'GET', `/v1/threads/${th.id}/messages?run_id=${runId}`, undefined, BETA);
      expect(messages.data[0].content[0].text.value).toBe('You said: a b c d e f g h i j k l m n o p');
      // No subscription is left behind.
      expect(t.app.runtime.pubsub.listenerCount(`runEvents:${runId}`)).toBe(0);
    } finally {
      useLocalModel(t, () => new LocalModel());
    }
  });
});

function failing(error: Error): ModelAdapter {
  return {
    // eslint-disable-next-line require-yield
    async *stream() {
      throw error;
    },
  };
}
