/**
 * The read side of runs over REST, with whole bodies under a manual clock: GET /v1/assistants
 * (list shape and cursor paging), GET /v1/assistants/{id}, GET /v1/threads/{id}/runs (paging,
 * has_more), GET /v1/threads/{id}/messages/{message_id} (a whole thread.message, user and
 * assistant; 404s), tenancy of these reads, and cancelling a run that is already `cancelling`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, unixSeconds } from '../../src/lib/clock.js';
import { LocalModel } from '../../src/modules/runs/models/local-model.js';
import type { ModelAdapter } from '../../src/modules/runs/models/model.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { error } from '../helpers/errors.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';
import { BETA, H, assistant, names, ok, parseSse, startRun, thread, useLocalModel, waitFor, weatherTool } from '../helpers/run-fixtures.js';

const START = new Date('2026-03-01T10:00:00.000Z');

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock(START);
  t = await createTestApp({}, { clock });
});
afterAll(() => t.close());

const now = () => unixSeconds(clock.now());
const get = (path: string, key?: string) => t.request('GET', path, { headers: BETA, key });
const list = (data: { id: string }[], has_more: boolean) => ({
  object: 'list',
  data,
  first_id: data[0]?.id ?? '',
  last_id: data.at(-1)?.id ?? '',
  has_more,
});

describe('assistants', () => {
  const made: any[] = [];

  beforeAll(async () => {
    made.push(
      await ok(t, 'POST', '/v1/assistants', {
        model: 'local-full',
        name: 'Weather bot',
        description: 'Answers about the weather',
        instructions: 'Be brief.',
        tools: [weatherTool],
        tool_resources: { code_interpreter: { file_ids: [] } },
        metadata: { team: 'forecast' },
        temperature: 0.5,
        top_p: 0.9,
        response_format: { type: 'json_object' },
      }),
    );
    for (const model of ['local-b', 'local-c']) {
      clock.advance(1_000);
      made.push(await ok(t, 'POST', '/v1/assistants', { model }));
    }
  });

  it('POST answers the whole assistant object; GET /v1/assistants/{id} returns the same', async () => {
    const [full, minimal] = made;
    expect(full.id).toMatch(/^asst_[A-Za-z0-9]{24}$/);
    expect(full).toEqual({
      id: full.id,
      object: 'assistant',
      created_at: unixSeconds(START),
      name: 'Weather bot',
      description: 'Answers about the weather',
      model: 'local-full',
      instructions: 'Be brief.',
      tools: [weatherTool],
      tool_resources: { code_interpreter: { file_ids: [] } },
      metadata: { team: 'forecast' },
      temperature: 0.5,
      top_p: 0.9,
      response_format: { type: 'json_object' },
    });
    expect(minimal).toEqual({
      id: minimal.id,
      object: 'assistant',
      created_at: unixSeconds(START) + 1,
      name: null,
      description: null,
      model: 'local-b',
      instructions: null,
      tools: [],
      tool_resources: {},
      metadata: {},
      temperature: 1,
      top_p: 1,
      response_format: 'auto',
    });
    for (const a of made) {
      const r = await get(`/v1/assistants/${a.id}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(r.body).toEqual(a);
    }
  });

  it('GET /v1/assistants: an OpenAI list, newest first by default', async () => {
    const r = await get('/v1/assistants');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.body).toEqual(list([made[2], made[1], made[0]], false));
  });

  it('limit, order, after and before page through it, with has_more', async () => {
    const [a1, a2, a3] = made;
    const page = async (query: string) => (await ok(t, 'GET', `/v1/assistants?${query}`, undefined, BETA)) as unknown;
    expect(await page('limit=2')).toEqual(list([a3, a2], true));
    expect(await page(`limit=2&after=${a2.id}`)).toEqual(list([a1], false));
    expect(await page('order=asc&limit=2')).toEqual(list([a1, a2], true));
    expect(await page(`order=asc&limit=2&after=${a2.id}`)).toEqual(list([a3], false));
    expect(await page(`order=asc&after=${a3.id}`)).toEqual(list([], false));
    // `before` is the page right before the cursor, in the list's order.
    expect(await page(`before=${a1.id}`)).toEqual(list([a3, a2], false));
    expect(await page(`before=${a1.id}&limit=1`)).toEqual(list([a2], true));
    expect(await page(`order=asc&before=${a3.id}&limit=1`)).toEqual(list([a2], true));
    expect(await page(`order=asc&after=${a1.id}&before=${a3.id}`)).toEqual(list([a2], false));
    expect(await page('limit=100')).toEqual(list([a3, a2, a1], false));
  });

  it('bad paging arguments are 400s naming the parameter', async () => {
    const cases: [string, unknown][] = [
      ['after=asst_nope', error("Invalid 'after': no object with id 'asst_nope' in this list.", 'after', 'invalid_value')],
      ['before=asst_nope', error("Invalid 'before': no object with id 'asst_nope' in this list.", 'before', 'invalid_value')],
      ['order=sideways', error("Invalid value: 'sideways'. Supported values are: 'asc' and 'desc'.", 'order', 'invalid_value')],
      ['limit=0', error("Invalid 'limit': integer below minimum value. Expected a value >= 1, but got 0 instead.", 'limit', 'integer_below_min_value')],
      ['limit=101', error("Invalid 'limit': integer above maximum value. Expected a value <= 100, but got 101 instead.", 'limit', 'integer_above_max_value')],
    ];
    for (const [query, body] of cases) {
      const r = await get(`/v1/assistants?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body, query).toEqual(body);
    }
  });

  it('404 for an unknown id; another workspace or organisation neither lists nor reads them', async () => {
    expect((await get('/v1/assistants/asst_nope')).body).toEqual(error("No assistant found with id 'asst_nope'."));
    const other = await createOtherOrganisation(t);
    const team = await createWorkspaceWithKey(t, 'Reads team');
    for (const key of [other.key, team.key]) {
      expect((await get('/v1/assistants', key)).body).toEqual(list([], false));
      const r = await get(`/v1/assistants/${made[0].id}`, key);
      expect(r.status).toBe(404);
      expect(r.body).toEqual(error(`No assistant found with id '${made[0].id}'.`));
    }
    // Their own assistants are theirs alone.
    const mine = await t.request('POST', '/v1/assistants', { body: { model: 'other-org' }, headers: BETA, key: other.key });
    expect((await get('/v1/assistants', other.key)).body).toEqual(list([mine.body], false));
    expect((await get(`/v1/assistants/${mine.body.id}`)).status).toBe(404);
    expect((await get('/v1/assistants')).body.data.map((a: any) => a.id)).not.toContain(mine.body.id);
  });
});

describe('GET /v1/threads/{thread_id}/runs', () => {
  it('lists the thread’s runs as whole run objects, with cursor paging and has_more', async () => {
    const a = await assistant(t, { tools: [] });
    const th = await thread(t, 'first');
    const runs: any[] = [];
    for (const text of ['second', 'third']) {
      const run = await ok(t, 'POST', `/v1/threads/${th.id}/runs`, { assistant_id: a.id, metadata: { n: String(runs.length) } });
      runs.push(await waitFor(t, th.id, run.id, ['completed']));
      clock.advance(1_000);
      await ok(t, 'POST', `/v1/threads/${th.id}/messages`, { role: 'user', content: text }, BETA);
    }
    const last = await ok(t, 'POST', `/v1/threads/${th.id}/runs`, { assistant_id: a.id, metadata: { n: '2' } });
    runs.push(await waitFor(t, th.id, last.id, ['completed']));
    const [r1, r2, r3] = runs;
    expect(r1).toMatchObject({ object: 'thread.run', status: 'completed', metadata: { n: '0' }, expires_at: null });
    expect(r3.created_at).toBe(r1.created_at + 2);

    const page = async (query = '') => {
      const r = await get(`/v1/threads/${th.id}/runs${query}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
      return r.body;
    };
    expect(await page()).toEqual(list([r3, r2, r1], false));
    expect(await page('?limit=1')).toEqual(list([r3], true));
    expect(await page(`?limit=1&after=${r3.id}`)).toEqual(list([r2], true));
    expect(await page(`?limit=1&after=${r2.id}`)).toEqual(list([r1], false));
    expect(await page('?order=asc&limit=2')).toEqual(list([r1, r2], true));
    expect(await page(`?order=asc&limit=2&after=${r2.id}`)).toEqual(list([r3], false));
    expect(await page(`?before=${r1.id}&limit=1`)).toEqual(list([r2], true));

    // A cursor from another thread's list is not a cursor of this one.
    const other = await startRun(t, 'elsewhere', {}, { tools: [] });
    const bad = await get(`/v1/threads/${th.id}/runs?after=${other.run.id}`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(error(`Invalid 'after': no object with id '${other.run.id}' in this list.`, 'after', 'invalid_value'));
    await waitFor(t, other.thread.id, other.run.id, ['completed']);
  });

  it('an empty thread lists nothing; an unknown thread is a 404', async () => {
    const th = await thread(t);
    expect((await get(`/v1/threads/${th.id}/runs`)).body).toEqual(list([], false));
    const r = await get('/v1/threads/thread_nope/runs');
    expect(r.status).toBe(404);
    expect(r.body).toEqual(error("No thread found with id 'thread_nope'."));
  });
});

describe('GET /v1/threads/{thread_id}/messages/{message_id}', () => {
  it('a user message: the whole thread.message object', async () => {
    const th = await thread(t);
    const created = await ok(
      t,
      'POST',
      `/v1/threads/${th.id}/messages`,
      { role: 'user', content: [{ type: 'text', text: 'What is the weather?' }], attachments: [{ file_id: 'file_1', tools: [{ type: 'file_search' }] }], metadata: { lang: 'en' } },
      BETA,
    );
    const expected = {
      id: created.id,
      object: 'thread.message',
      created_at: now(),
      thread_id: th.id,
      status: 'completed',
      incomplete_details: null,
      completed_at: now(),
      incomplete_at: null,
      role: 'user',
      content: [{ type: 'text', text: { value: 'What is the weather?', annotations: [] } }],
      assistant_id: null,
      run_id: null,
      attachments: [{ file_id: 'file_1', tools: [{ type: 'file_search' }] }],
      metadata: { lang: 'en' },
    };
    expect(created.id).toMatch(/^msg_[A-Za-z0-9]{24}$/);
    expect(created).toEqual(expected);
    const r = await get(`/v1/threads/${th.id}/messages/${created.id}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.body).toEqual(expected);
  });

  it('an assistant message a run wrote: the whole object, equal to its thread.message.completed event', async () => {
    const a = await assistant(t, { tools: [] });
    const th = await thread(t, 'echo this');
    const stream = parseSse((await t.request('POST', `/v1/threads/${th.id}/runs`, { body: { assistant_id: a.id, stream: true }, headers: H })).text);
    const completed = JSON.parse(stream.find((m) => m.event === 'thread.message.completed')!.data);
    const runId = JSON.parse(stream[0].data).id;
    const r = await get(`/v1/threads/${th.id}/messages/${completed.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: completed.id,
      object: 'thread.message',
      created_at: now(),
      thread_id: th.id,
      status: 'completed',
      incomplete_details: null,
      completed_at: now(),
      incomplete_at: null,
      role: 'assistant',
      content: [{ type: 'text', text: { value: 'You said: echo this', annotations: [] } }],
      assistant_id: a.id,
      run_id: runId,
      attachments: [],
      metadata: {},
    });
    expect(r.body).toEqual(completed);
  });

  it('404: unknown message, a message of another thread, an unknown thread, another workspace', async () => {
    const th = await thread(t, 'mine');
    const other = await thread(t, 'theirs');
    const mine = (await ok(t, 'GET', `/v1/threads/${th.id}/messages`, undefined, BETA)).data[0];
    const theirs = (await ok(t, 'GET', `/v1/threads/${other.id}/messages`, undefined, BETA)).data[0];

    const cases: [string, string, string | undefined][] = [
      [`/v1/threads/${th.id}/messages/msg_nope`, "No message found with id 'msg_nope'.", undefined],
      [`/v1/threads/${th.id}/messages/${theirs.id}`, `No message found with id '${theirs.id}'.`, undefined],
      [`/v1/threads/thread_nope/messages/${mine.id}`, "No thread found with id 'thread_nope'.", undefined],
    ];
    const team = await createWorkspaceWithKey(t, 'Messages team');
    const org = await createOtherOrganisation(t, 'Messages org');
    for (const key of [team.key, org.key]) cases.push([`/v1/threads/${th.id}/messages/${mine.id}`, `No thread found with id '${th.id}'.`, key]);
    for (const [path, message, key] of cases) {
      const r = await get(path, key);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(r.body, path).toEqual(error(message));
    }
  });
});

describe('cancelling a run that is already cancelling', () => {
  it('400 Cannot cancel run with status \'cancelling\'; nothing is logged; the run then settles cancelled', async () => {
    // A model that does not stop at once when asked: the run stays `cancelling` until it returns.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let called!: () => void;
    const modelCalled = new Promise<void>((resolve) => (called = resolve));
    const stubborn: ModelAdapter = {
      async *stream() {
        called();
        await released;
        yield { type: 'text_delta', text: 'too late' };
        yield { type: 'done', finishReason: 'stop', usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
      },
    };
    useLocalModel(t, () => stubborn);
    try {
      const { thread: th, run } = await startRun(t, 'please take long', {}, { tools: [] });
      await modelCalled;
      // The run shows in_progress once the model has not answered at once (its first write).
      await waitFor(t, th.id, run.id, ['in_progress']);
      const first = await t.request('POST', `/v1/threads/${th.id}/runs/${run.id}/cancel`, { headers: BETA });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ id: run.id, status: 'cancelling', cancelled_at: null, expires_at: run.expires_at, usage: null });
      expect((await ok(t, 'GET', `/v1/threads/${th.id}/runs/${run.id}`, undefined, BETA)).status).toBe('cancelling');

      const second = await t.request('POST', `/v1/threads/${th.id}/runs/${run.id}/cancel`, { headers: BETA });
      expect(second.status).toBe(400);
      expect(second.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(second.body).toEqual(error("Cannot cancel run with status 'cancelling'."));

      release();
      const done = await waitFor(t, th.id, run.id, ['cancelled', 'completed']);
      expect(done).toMatchObject({ status: 'cancelled', cancelled_at: now(), completed_at: null, expires_at: null });
      const log = names(parseSse((await t.request('GET', `/v1/threads/${th.id}/runs/${run.id}/events`, { headers: BETA })).text));
      expect(log).toEqual(['thread.run.created', 'thread.run.queued', 'thread.run.in_progress', 'thread.run.cancelling', 'thread.run.cancelled', 'done']);
      // The late answer was discarded: the run wrote no message.
      expect((await ok(t, 'GET', `/v1/threads/${th.id}/messages?run_id=${run.id}`, undefined, BETA)).data).toEqual([]);
      const again = await t.request('POST', `/v1/threads/${th.id}/runs/${run.id}/cancel`, { headers: BETA });
      expect(again.body).toEqual(error("Cannot cancel run with status 'cancelled'."));
    } finally {
      useLocalModel(t, () => new LocalModel());
    }
  });
});
