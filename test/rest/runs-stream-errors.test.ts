/**
 * `stream: true`: failures before the stream starts are plain JSON errors (status,
 * `application/json`, the four-key envelope with the exact message) on all three streaming routes,
 * and nothing is written for them; a fault inside a live run stream is sent as `event: error`
 * and closes the stream; shutdown ends a live run stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { LocalModel } from '../../src/modules/runs/models/local-model.js';
import { throwIfAborted, type ModelAdapter } from '../../src/modules/runs/models/model.js';
import { createTestApp, type TestApp, type TestResponse } from '../helpers/app.js';
import { BETA, H, assistant, names, ok, parseSse, startRun, thread, useLocalModel, waitFor, waitingRun } from '../helpers/run-fixtures.js';

const MISSING_VIRTUAL_KEY =
  'Missing virtual key: send the x-gateway-virtual-key header with the slug of a provider in your workspace (for example `local`).';

const envelope = (message: string, param: string | null = null, code: string | null = null, type = 'invalid_request_error') => ({
  error: { message, type, param, code },
});

/** A plain JSON error: never an event stream. */
function expectJsonError(r: TestResponse, status: number, body: unknown) {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(r.text).not.toContain('event:');
  expect(r.body).toEqual(body);
}

/** A model that never answers until its signal aborts (also when it was aborted before the call). */
const hanging: () => ModelAdapter = () => ({
  async *stream(req) {
    throwIfAborted(req.signal);
    await new Promise((_resolve, reject) => req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true }));
    throwIfAborted(req.signal);
  },
});

/** Reads a streamed response as it arrives. */
function streamReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    get text() {
      return text;
    },
    async until(fragment: string) {
      while (!text.includes(fragment)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`stream ended before ${JSON.stringify(fragment)}:\n${text}`);
        text += decoder.decode(value);
      }
    },
    async rest() {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += decoder.decode(value);
      }
    },
  };
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function threadCount(app: TestApp) {
  const r = await app.graphql('{ threads(limit: 100) { data { id } } }');
  return r.data.threads.data.length as number;
}

async function eventCount(app: TestApp, threadId: string, runId: string) {
  const r = await app.request('GET', `/v1/threads/${threadId}/runs/${runId}/events`, { headers: BETA });
  return parseSse(r.text).length;
}

describe('POST /v1/threads/runs with stream: true', () => {
  let assistantId: string;
  beforeAll(async () => {
    assistantId = (await assistant(t, { tools: [] })).id;
  });
  const post = (body: Record<string, unknown>, headers: Record<string, string> = H) =>
    t.request('POST', '/v1/threads/runs', { body: { stream: true, thread: { messages: [{ role: 'user', content: 'hi' }] }, ...body }, headers });

  it('a bad body is a 400 JSON error, and no thread is created', async () => {
    const before = await threadCount(t);
    expectJsonError(
      await post({ assistant_id: 7 }),
      400,
      envelope("Invalid type for 'assistant_id': expected a string, but got an integer instead.", 'assistant_id', 'invalid_type'),
    );
    expectJsonError(
      await post({ assistant_id: assistantId, stream: 'yes' }),
      400,
      envelope("Invalid type for 'stream': expected a boolean, but got a string instead.", 'stream', 'invalid_type'),
    );
    expectJsonError(await post({}), 400, envelope("Missing required parameter: 'assistant_id'.", 'assistant_id', 'missing_required_parameter'));
    expectJsonError(
      await post({ assistant_id: assistantId, top_p: 1.5 }),
      400,
      envelope("Invalid 'top_p': decimal above maximum value. Expected a value <= 1, but got 1.5 instead.", 'top_p', 'decimal_above_max_value'),
    );
    expect(await threadCount(t)).toBe(before);
  });

  it('an unknown assistant is a 404 JSON error', async () => {
    const before = await threadCount(t);
    expectJsonError(await post({ assistant_id: 'asst_nope' }), 404, envelope("No assistant found with id 'asst_nope'."));
    expect(await threadCount(t)).toBe(before);
  });

  it('a missing x-gateway-virtual-key is a 400 JSON error; an unknown one a 404', async () => {
    const before = await threadCount(t);
    expectJsonError(await post({ assistant_id: assistantId }, BETA), 400, envelope(MISSING_VIRTUAL_KEY, null, 'missing_virtual_key'));
    expectJsonError(
      await post({ assistant_id: assistantId }, { ...BETA, 'x-gateway-virtual-key': 'nope' }),
      404,
      envelope("No provider found for virtual key 'nope' in this workspace.", null, 'virtual_key_not_found'),
    );
    expect(await threadCount(t)).toBe(before);
  });

  it('no API key or no beta header: JSON errors too', async () => {
    const noKey = await t.request('POST', '/v1/threads/runs', { body: { assistant_id: assistantId, stream: true }, headers: H, key: null });
    expectJsonError(noKey, 401, envelope('Missing API key: send it in the x-gateway-api-key header.', null, 'invalid_api_key', 'authentication_error'));
    const noBeta = await post({ assistant_id: assistantId }, { 'x-gateway-virtual-key': 'local' });
    expectJsonError(
      noBeta,
      400,
      envelope("This route needs the beta header 'Vendor-Beta: assistants=v2' (or 'OpenAI-Beta: assistants=v2').", null, 'invalid_beta'),
    );
  });

  it('the same request with a valid body does stream', async () => {
    const r = await post({ assistant_id: assistantId });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(names(parseSse(r.text)).slice(-2)).toEqual(['thread.run.completed', 'done']);
  });
});

describe('POST /v1/threads/{thread_id}/runs with stream: true', () => {
  it('bad body, unknown thread, unknown assistant, missing virtual key: JSON errors, no run created', async () => {
    const a = await assistant(t, { tools: [] });
    const th = await thread(t, 'hello');
    const post = (body: Record<string, unknown>, headers: Record<string, string> = H, threadId = th.id) =>
      t.request('POST', `/v1/threads/${threadId}/runs`, { body: { stream: true, ...body }, headers });

    expectJsonError(
      await post({ assistant_id: a.id, max_completion_tokens: 10 }),
      400,
      envelope(
        "Invalid 'max_completion_tokens': integer below minimum value. Expected a value >= 256, but got 10 instead.",
        'max_completion_tokens',
        'integer_below_min_value',
      ),
    );
    expectJsonError(
      await post({ assistant_id: a.id, additional_instructions: 5 }),
      400,
      envelope("Invalid type for 'additional_instructions': expected a string, but got an integer instead.", 'additional_instructions', 'invalid_type'),
    );
    expectJsonError(await post({ assistant_id: a.id }, H, 'thread_nope'), 404, envelope("No thread found with id 'thread_nope'."));
    expectJsonError(await post({ assistant_id: 'asst_nope' }), 404, envelope("No assistant found with id 'asst_nope'."));
    expectJsonError(await post({ assistant_id: a.id }, BETA), 400, envelope(MISSING_VIRTUAL_KEY, null, 'missing_virtual_key'));

    const runs = await ok(t, 'GET', `/v1/threads/${th.id}/runs`, undefined, BETA);
    expect(runs).toEqual({ object: 'list', data: [], first_id: '', last_id: '', has_more: false });
  });

  it('a thread with an active run: 400 JSON error naming both ids', async () => {
    const { run } = await waitingRun(t);
    const r = await t.request('POST', `/v1/threads/${run.thread_id}/runs`, { body: { assistant_id: run.assistant_id, stream: true }, headers: H });
    expectJsonError(r, 400, envelope(`Thread ${run.thread_id} already has an active run ${run.id}.`));
  });
});

describe('POST /v1/threads/{thread_id}/runs/{run_id}/submit_tool_outputs with stream: true', () => {
  const submit = (threadId: string, runId: string, body: Record<string, unknown>, headers: Record<string, string> = H) =>
    t.request('POST', `/v1/threads/${threadId}/runs/${runId}/submit_tool_outputs`, { body: { stream: true, ...body }, headers });

  it('every refusal of a waiting run is a JSON error, and the run keeps waiting with its log unchanged', async () => {
    const { run, calls } = await waitingRun(t);
    const callId = calls[0].id;
    const logged = await eventCount(t, run.thread_id, run.id);
    const output = (id = callId, value: unknown = 'sunny') => ({ tool_outputs: [{ tool_call_id: id, output: value }] });

    expectJsonError(
      await submit(run.thread_id, run.id, output(callId, 42)),
      400,
      envelope("Invalid type for 'tool_outputs[0].output': expected a string, but got an integer instead.", 'tool_outputs[0].output', 'invalid_type'),
    );
    expectJsonError(await submit(run.thread_id, run.id, {}), 400, envelope("Missing required parameter: 'tool_outputs'.", 'tool_outputs', 'missing_required_parameter'));
    expectJsonError(await submit(run.thread_id, run.id, { ...output(), extra: 1 }), 400, envelope('Unrecognized request argument supplied: extra', 'extra', 'unknown_parameter'));
    expectJsonError(
      await submit(run.thread_id, run.id, output('call_unknown')),
      400,
      envelope(`Expected tool outputs for call_ids ['${callId}'], got ['call_unknown']`),
    );
    expectJsonError(
      await submit(run.thread_id, run.id, { tool_outputs: [] }),
      400,
      envelope(`Expected tool outputs for call_ids ['${callId}'], got []`),
    );
    expectJsonError(await submit('thread_nope', run.id, output()), 404, envelope("No thread found with id 'thread_nope'."));
    expectJsonError(await submit(run.thread_id, 'run_nope', output()), 404, envelope("No run found with id 'run_nope'."));
    expectJsonError(
      await submit(run.thread_id, run.id, output(), { ...BETA, 'x-gateway-virtual-key': 'other' }),
      400,
      envelope(`Run ${run.id} was created with virtual key 'local': submit its tool outputs with the same virtual key.`, null, 'virtual_key_mismatch'),
    );
    // Without any virtual key there is nothing to run the model with.
    expectJsonError(await submit(run.thread_id, run.id, output(), BETA), 400, envelope(MISSING_VIRTUAL_KEY, null, 'missing_virtual_key'));

    expect((await ok(t, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, undefined, BETA)).status).toBe('requires_action');
    expect(await eventCount(t, run.thread_id, run.id)).toBe(logged);

    // The valid submit still streams afterwards.
    const accepted = await submit(run.thread_id, run.id, output());
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(names(parseSse(accepted.text)).slice(-2)).toEqual(['thread.run.completed', 'done']);
  });

  it('a run not in requires_action (completed, a second submit) refuses with the status in the message', async () => {
    const { run, calls } = await waitingRun(t);
    const body = { tool_outputs: [{ tool_call_id: calls[0].id, output: 'x' }] };
    const first = await submit(run.thread_id, run.id, body);
    expect(first.status).toBe(200);
    expectJsonError(await submit(run.thread_id, run.id, body), 400, envelope('Runs in status "completed" do not accept tool outputs.'));

    const { thread: th, run: textRun } = await startRun(t, 'no tools here', {}, { tools: [] });
    await waitFor(t, th.id, textRun.id, ['completed']);
    expectJsonError(
      await submit(th.id, textRun.id, { tool_outputs: [{ tool_call_id: 'call_x', output: 'x' }] }),
      400,
      envelope('Runs in status "completed" do not accept tool outputs.'),
    );
  });

  it('a cancelled run refuses with its status', async () => {
    const { run, calls } = await waitingRun(t);
    await ok(t, 'POST', `/v1/threads/${run.thread_id}/runs/${run.id}/cancel`, undefined, BETA);
    expectJsonError(
      await submit(run.thread_id, run.id, { tool_outputs: [{ tool_call_id: calls[0].id, output: 'x' }] }),
      400,
      envelope('Runs in status "cancelled" do not accept tool outputs.'),
    );
  });
});

describe('submit_tool_outputs with stream: true on an expired run', () => {
  let app: TestApp;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock(new Date('2026-03-01T10:00:00.000Z'));
    app = await createTestApp({}, { clock });
  });
  afterAll(() => app.close());

  it('the run is expired first, then refused as JSON: Runs in status "expired"', async () => {
    const { run, calls } = await waitingRun(app);
    clock.advance(600_000);
    const r = await app.request('POST', `/v1/threads/${run.thread_id}/runs/${run.id}/submit_tool_outputs`, {
      body: { tool_outputs: [{ tool_call_id: calls[0].id, output: 'late' }], stream: true },
      headers: H,
    });
    expectJsonError(r, 400, envelope('Runs in status "expired" do not accept tool outputs.'));
    expect(await ok(app, 'GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, undefined, BETA)).toMatchObject({
      status: 'expired',
      expires_at: null,
      required_action: null,
    });
  });
});

describe('faults inside a live run stream', () => {
  it('a fault after the stream started is sent as event: error with the masked error, and the stream closes', async () => {
    useLocalModel(t, hanging);
    try {
      const a = await assistant(t, { tools: [] });
      const th = await thread(t, 'wait for me');
      const response = await t.app.fetch(
        new Request(`http://gatehouse.test/v1/threads/${th.id}/runs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-gateway-api-key': t.key, 'x-gateway-request-id': 'req-stream-fault-1', ...H },
          body: JSON.stringify({ assistant_id: a.id, stream: true }),
        }),
      );
      expect(response.status).toBe(200);
      const stream = streamReader(response);
      await stream.until('event: thread.run.in_progress');
      const runId = JSON.parse(parseSse(stream.text)[0].data).id as string;
      const topic = `runEvents:${runId}`;
      for (let i = 0; i < 200 && t.app.runtime.pubsub.listenerCount(topic) === 0; i++) await new Promise((r) => setTimeout(r, 2));
      // A corrupt live event (no name) makes the subscription's result an error mid-stream.
      t.app.runtime.pubsub.publish(topic, { sequence: 4, event: null, data: {} });
      const text = await stream.rest();
      const messages = parseSse(text);
      expect(names(messages)).toEqual(['thread.run.created', 'thread.run.queued', 'thread.run.in_progress', 'error']);
      expect(messages.at(-1)).toEqual({
        event: 'error',
        data: JSON.stringify({ error: { message: 'Internal server error (request req-stream-fault-1).', type: 'server_error', param: null, code: null } }),
      });
      expect(text).not.toContain('[DONE]');
      expect(t.app.runtime.pubsub.listenerCount(topic)).toBe(0);
      // The run itself is untouched by the stream's fault.
      expect((await ok(t, 'GET', `/v1/threads/${th.id}/runs/${runId}`, undefined, BETA)).status).toBe('in_progress');
      await ok(t, 'POST', `/v1/threads/${th.id}/runs/${runId}/cancel`, undefined, BETA);
      expect((await waitFor(t, th.id, runId, ['cancelled'])).status).toBe('cancelled');
    } finally {
      useLocalModel(t, () => new LocalModel());
    }
  });
});

describe('shutdown', () => {
  it('ends a live run stream after what it has written, without [DONE]', async () => {
    const app = await createTestApp();
    try {
      useLocalModel(app, hanging);
      const a = await assistant(app, { tools: [] });
      const th = await thread(app, 'hang until shutdown');
      const response = await app.app.fetch(
        new Request(`http://gatehouse.test/v1/threads/${th.id}/runs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-gateway-api-key': app.key, ...H },
          body: JSON.stringify({ assistant_id: a.id, stream: true }),
        }),
      );
      const stream = streamReader(response);
      await stream.until('event: thread.run.in_progress');
      app.app.runtime.beginShutdown();
      const text = await stream.rest();
      expect(names(parseSse(text))).toEqual(['thread.run.created', 'thread.run.queued', 'thread.run.in_progress']);
      expect(text).not.toContain('[DONE]');
      expect(text).not.toContain('event: error');
    } finally {
      await app.close();
    }
  });

  it('a stream asked for after shutdown began ends at once, never with a [DONE] for an unfinished run', async () => {
    const app = await createTestApp();
    try {
      useLocalModel(app, hanging);
      const { thread: th, run } = await startRun(app, 'hang', {}, { tools: [] });
      await waitFor(app, th.id, run.id, ['in_progress']);
      app.app.runtime.beginShutdown();
      const response = await app.app.fetch(
        new Request(`http://gatehouse.test/v1/threads/${th.id}/runs/${run.id}/events`, { headers: { 'x-gateway-api-key': app.key, ...BETA } }),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      // Before the fix in rest/sse.ts the already-aborted signal went unnoticed: the log was
      // replayed and, the live feed being closed, `[DONE]` followed although the run was running.
      expect(await response.text()).toBe('');
    } finally {
      await app.close();
    }
  });
});
