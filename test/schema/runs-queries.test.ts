/**
 * The runs domain's root queries through GraphQL: `assistants`, `assistant`, `runs`, `messages`
 * (with `runId`) and `message`, with whole results under a manual clock, cursor paging, the
 * exact not-found errors (message, path, extensions), and tenancy: another organisation, or a
 * workspace key of another workspace, neither lists nor reads these objects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, unixSeconds } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';
import { BETA, ok as rest, thread, waitFor, weatherTool } from '../helpers/run-fixtures.js';

const START = new Date('2026-03-01T10:00:00.000Z');
const T = unixSeconds(START);

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock(START);
  t = await createTestApp({}, { clock });
});
afterAll(() => t.close());

async function ok<T = any>(query: string, variables: Record<string, unknown> = {}, key?: string): Promise<T> {
  const g = await t.graphql<T>(query, variables, key);
  expect(g.errors, JSON.stringify(g.errors)).toBeUndefined();
  return g.data!;
}

/** A document that must fail with exactly one error: the whole error, and `data: null`. */
async function fails(query: string, variables: Record<string, unknown>, key?: string) {
  const g = await t.graphql(query, variables, key);
  expect(g.status).toBe(200);
  expect(g.body.data).toBeNull();
  expect(g.errors).toHaveLength(1);
  const { locations: _locations, ...error } = g.errors![0];
  return error;
}

const notFound = (message: string, path: string) => ({
  message,
  path: [path],
  extensions: { status: 404, type: 'invalid_request_error', param: null, code: null, headers: {}, extra: {} },
});

const list = <T extends { id: string }>(data: T[], hasMore: boolean) => ({
  object: 'list',
  data,
  firstId: data[0]?.id ?? null,
  lastId: data.at(-1)?.id ?? null,
  hasMore,
});

const ASSISTANT_FIELDS = 'id object createdAt name description model instructions tools toolResources metadata temperature topP responseFormat';
const ASSISTANTS = `query($limit: Int, $order: String, $after: String, $before: String) {
  assistants(limit: $limit, order: $order, after: $after, before: $before) { object data { ${ASSISTANT_FIELDS} } firstId lastId hasMore }
}`;
const ASSISTANT = `query($id: String!) { assistant(id: $id) { ${ASSISTANT_FIELDS} } }`;
const MESSAGE_FIELDS =
  'id object createdAt threadId status incompleteDetails { reason } completedAt incompleteAt role content { type text { value annotations } } assistantId runId attachments metadata';
const MESSAGES = `query($threadId: String!, $runId: String, $limit: Int, $order: String, $after: String, $before: String) {
  messages(threadId: $threadId, runId: $runId, limit: $limit, order: $order, after: $after, before: $before) { object data { ${MESSAGE_FIELDS} } firstId lastId hasMore }
}`;
const MESSAGE = `query($threadId: String!, $id: String!) { message(threadId: $threadId, id: $id) { ${MESSAGE_FIELDS} } }`;
const RUNS = `query($threadId: String!, $limit: Int, $order: String, $after: String, $before: String) {
  runs(threadId: $threadId, limit: $limit, order: $order, after: $after, before: $before) {
    object data { id object createdAt threadId assistantId status expiresAt startedAt completedAt model instructions metadata usage { promptTokens completionTokens totalTokens } } firstId lastId hasMore
  }
}`;

const CREATE_ASSISTANT = `mutation($i: CreateAssistantInput!) { createAssistant(input: $i) { ${ASSISTANT_FIELDS} } }`;

describe('assistants and assistant', () => {
  const made: any[] = [];
  beforeAll(async () => {
    made.push(
      (
        await ok(CREATE_ASSISTANT, {
          i: {
            model: 'local-g',
            name: 'Helper',
            description: 'Helps',
            instructions: 'Be kind.',
            tools: [weatherTool],
            toolResources: { file_search: { vector_store_ids: [] } },
            metadata: { tier: 'gold' },
            temperature: 0.2,
            topP: 0.5,
            responseFormat: { type: 'json_object' },
          },
        })
      ).createAssistant,
    );
    for (const model of ['local-h', 'local-i']) {
      clock.advance(1_000);
      made.push((await ok(CREATE_ASSISTANT, { i: { model } })).createAssistant);
    }
  });

  it('assistant(id): the whole assistant', async () => {
    const [full, minimal] = made;
    expect(await ok(ASSISTANT, { id: full.id })).toEqual({
      assistant: {
        id: full.id,
        object: 'assistant',
        createdAt: T,
        name: 'Helper',
        description: 'Helps',
        model: 'local-g',
        instructions: 'Be kind.',
        tools: [weatherTool],
        toolResources: { file_search: { vector_store_ids: [] } },
        metadata: { tier: 'gold' },
        temperature: 0.2,
        topP: 0.5,
        responseFormat: { type: 'json_object' },
      },
    });
    expect(await ok(ASSISTANT, { id: minimal.id })).toEqual({
      assistant: {
        id: minimal.id,
        object: 'assistant',
        createdAt: T + 1,
        name: null,
        description: null,
        model: 'local-h',
        instructions: null,
        tools: [],
        toolResources: {},
        metadata: {},
        temperature: 1,
        topP: 1,
        responseFormat: 'auto',
      },
    });
  });

  it('assistants: the whole list, then paged with limit, order, after and before', async () => {
    const [a1, a2, a3] = made;
    expect(await ok(ASSISTANTS)).toEqual({ assistants: list([a3, a2, a1], false) });
    expect((await ok(ASSISTANTS, { limit: 2 })).assistants).toEqual(list([a3, a2], true));
    expect((await ok(ASSISTANTS, { limit: 2, after: a2.id })).assistants).toEqual(list([a1], false));
    expect((await ok(ASSISTANTS, { order: 'asc', limit: 2 })).assistants).toEqual(list([a1, a2], true));
    expect((await ok(ASSISTANTS, { order: 'asc', after: a2.id })).assistants).toEqual(list([a3], false));
    expect((await ok(ASSISTANTS, { before: a1.id, limit: 1 })).assistants).toEqual(list([a2], true));
  });

  it('bad paging arguments and unknown ids are errors with the REST messages', async () => {
    expect(await fails(ASSISTANTS, { limit: 0 })).toEqual({
      message: "Invalid 'limit': integer below minimum value. Expected a value >= 1, but got 0 instead.",
      path: ['assistants'],
      extensions: { status: 400, type: 'invalid_request_error', param: 'limit', code: 'integer_below_min_value', headers: {}, extra: {} },
    });
    expect(await fails(ASSISTANTS, { after: 'asst_nope' })).toEqual({
      message: "Invalid 'after': no object with id 'asst_nope' in this list.",
      path: ['assistants'],
      extensions: { status: 400, type: 'invalid_request_error', param: 'after', code: 'invalid_value', headers: {}, extra: {} },
    });
    expect(await fails(ASSISTANT, { id: 'asst_nope' })).toEqual(notFound("No assistant found with id 'asst_nope'.", 'assistant'));
  });

  it('tenancy: another organisation or another workspace lists none and reads none of them', async () => {
    const other = await createOtherOrganisation(t);
    const team = await createWorkspaceWithKey(t, 'GraphQL team');
    for (const key of [other.key, team.key]) {
      expect(await ok(ASSISTANTS, {}, key)).toEqual({ assistants: list([], false) });
      for (const a of made) expect(await fails(ASSISTANT, { id: a.id }, key)).toEqual(notFound(`No assistant found with id '${a.id}'.`, 'assistant'));
    }
    const theirs = (await ok(CREATE_ASSISTANT, { i: { model: 'theirs' } }, other.key)).createAssistant;
    expect(await ok(ASSISTANTS, {}, other.key)).toEqual({ assistants: list([theirs], false) });
    expect(await fails(ASSISTANT, { id: theirs.id })).toEqual(notFound(`No assistant found with id '${theirs.id}'.`, 'assistant'));
  });
});

describe('runs, messages and message', () => {
  let threadId: string;
  let assistantId: string;
  const runIds: string[] = [];
  /** When this block's thread was made (the clock moved on in the block above). */
  let B: number;

  beforeAll(async () => {
    B = unixSeconds(clock.now());
    assistantId = (await ok(CREATE_ASSISTANT, { i: { model: 'local-q' } })).createAssistant.id;
    threadId = (await thread(t, 'first question')).id;
    for (const next of ['second question', null]) {
      clock.advance(1_000);
      const run = (
        await ok(`mutation($t: String!, $i: CreateRunInput!) { createRun(threadId: $t, input: $i, virtualKey: "local") { id } }`, {
          t: threadId,
          i: { assistantId, metadata: { n: String(runIds.length) } },
        })
      ).createRun;
      runIds.push(run.id);
      await waitFor(t, threadId, run.id, ['completed']);
      if (next) await rest(t, 'POST', `/v1/threads/${threadId}/messages`, { role: 'user', content: next }, BETA);
    }
  });

  it('runs(threadId): whole runs, newest first, paged with has_more', async () => {
    const run = (id: string, n: number) => ({
      id,
      object: 'thread.run',
      createdAt: B + 1 + n,
      threadId,
      assistantId,
      status: 'completed',
      expiresAt: null,
      startedAt: B + 1 + n,
      completedAt: B + 1 + n,
      model: 'local-q',
      instructions: '',
      metadata: { n: String(n) },
      usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number), totalTokens: expect.any(Number) },
    });
    const [r1, r2] = [run(runIds[0], 0), run(runIds[1], 1)];
    expect(await ok(RUNS, { threadId })).toEqual({ runs: list([r2, r1], false) });
    expect((await ok(RUNS, { threadId, limit: 1 })).runs).toEqual(list([r2], true));
    expect((await ok(RUNS, { threadId, limit: 1, after: runIds[1] })).runs).toEqual(list([r1], false));
    expect((await ok(RUNS, { threadId, order: 'asc', limit: 1 })).runs).toEqual(list([r1], true));
    // The same objects as the REST read.
    const restRun = await rest(t, 'GET', `/v1/threads/${threadId}/runs/${runIds[0]}`, undefined, BETA);
    const usage = (await ok(RUNS, { threadId, order: 'asc', limit: 1 })).runs.data[0].usage;
    expect(usage).toEqual({ promptTokens: restRun.usage.prompt_tokens, completionTokens: restRun.usage.completion_tokens, totalTokens: restRun.usage.total_tokens });
  });

  it('messages(threadId): the whole conversation; runId keeps what that run wrote; paging', async () => {
    const all = (await ok(MESSAGES, { threadId, order: 'asc' })).messages;
    expect(all.hasMore).toBe(false);
    expect(all.data.map((m: any) => [m.role, m.content[0].text.value, m.runId])).toEqual([
      ['user', 'first question', null],
      ['assistant', 'You said: first question', runIds[0]],
      ['user', 'second question', null],
      ['assistant', 'You said: second question', runIds[1]],
    ]);
    const ids = all.data.map((m: any) => m.id);
    expect(all).toEqual(list(all.data, false));
    expect((await ok(MESSAGES, { threadId })).messages).toEqual(list([...all.data].reverse(), false));
    expect((await ok(MESSAGES, { threadId, runId: runIds[1] })).messages).toEqual(list([all.data[3]], false));
    expect((await ok(MESSAGES, { threadId, order: 'asc', limit: 2, after: ids[0] })).messages).toEqual(list([all.data[1], all.data[2]], true));
    expect((await ok(MESSAGES, { threadId, order: 'asc', before: ids[3], limit: 1 })).messages).toEqual(list([all.data[2]], true));
    expect((await ok(MESSAGES, { threadId, runId: 'run_nope' })).messages).toEqual(list([], false));
  });

  it('message(threadId, id): the whole message, user and assistant', async () => {
    const [user, answer] = (await ok(MESSAGES, { threadId, order: 'asc', limit: 2 })).messages.data;
    expect(await ok(MESSAGE, { threadId, id: user.id })).toEqual({
      message: {
        id: user.id,
        object: 'thread.message',
        createdAt: B,
        threadId,
        status: 'completed',
        incompleteDetails: null,
        completedAt: B,
        incompleteAt: null,
        role: 'user',
        content: [{ type: 'text', text: { value: 'first question', annotations: [] } }],
        assistantId: null,
        runId: null,
        attachments: [],
        metadata: {},
      },
    });
    expect(await ok(MESSAGE, { threadId, id: answer.id })).toEqual({
      message: {
        id: answer.id,
        object: 'thread.message',
        createdAt: B + 1,
        threadId,
        status: 'completed',
        incompleteDetails: null,
        completedAt: B + 1,
        incompleteAt: null,
        role: 'assistant',
        content: [{ type: 'text', text: { value: 'You said: first question', annotations: [] } }],
        assistantId,
        runId: runIds[0],
        attachments: [],
        metadata: {},
      },
    });
    // The REST object, field for field.
    const wire = await rest(t, 'GET', `/v1/threads/${threadId}/messages/${answer.id}`, undefined, BETA);
    expect(wire).toMatchObject({ id: answer.id, created_at: B + 1, run_id: runIds[0], assistant_id: assistantId, content: [{ text: { value: 'You said: first question' } }] });
  });

  it('not found: unknown thread (each query), unknown message, a message of another thread', async () => {
    const th = await thread(t, 'elsewhere');
    const elsewhere = (await ok(MESSAGES, { threadId: th.id })).messages.data[0];
    expect(await fails(RUNS, { threadId: 'thread_nope' })).toEqual(notFound("No thread found with id 'thread_nope'.", 'runs'));
    expect(await fails(MESSAGES, { threadId: 'thread_nope' })).toEqual(notFound("No thread found with id 'thread_nope'.", 'messages'));
    expect(await fails(MESSAGE, { threadId: 'thread_nope', id: elsewhere.id })).toEqual(notFound("No thread found with id 'thread_nope'.", 'message'));
    expect(await fails(MESSAGE, { threadId, id: 'msg_nope' })).toEqual(notFound("No message found with id 'msg_nope'.", 'message'));
    expect(await fails(MESSAGE, { threadId, id: elsewhere.id })).toEqual(notFound(`No message found with id '${elsewhere.id}'.`, 'message'));
  });

  it('tenancy: another organisation or another workspace cannot read the thread’s runs or messages', async () => {
    const [message] = (await ok(MESSAGES, { threadId, limit: 1 })).messages.data;
    const other = await createOtherOrganisation(t, 'Runs org');
    const team = await createWorkspaceWithKey(t, 'Runs team');
    const missing = `No thread found with id '${threadId}'.`;
    for (const key of [other.key, team.key]) {
      expect(await fails(RUNS, { threadId }, key)).toEqual(notFound(missing, 'runs'));
      expect(await fails(MESSAGES, { threadId }, key)).toEqual(notFound(missing, 'messages'));
      expect(await fails(MESSAGES, { threadId, runId: runIds[0] }, key)).toEqual(notFound(missing, 'messages'));
      expect(await fails(MESSAGE, { threadId, id: message.id }, key)).toEqual(notFound(missing, 'message'));
      expect(await fails(`query($t: String!, $r: String!) { run(threadId: $t, id: $r) { id } }`, { t: threadId, r: runIds[0] }, key)).toEqual(notFound(missing, 'run'));
    }
    // Their own thread is readable by them and invisible to us.
    const theirs = (await ok(`mutation { createThread(input: { messages: [{ role: "user", content: "ours" }] }) { id } }`, {}, other.key)).createThread.id;
    expect((await ok(MESSAGES, { threadId: theirs }, other.key)).messages.data.map((m: any) => m.content[0].text.value)).toEqual(['ours']);
    expect(await fails(MESSAGES, { threadId: theirs })).toEqual(notFound(`No thread found with id '${theirs}'.`, 'messages'));
  });
});
