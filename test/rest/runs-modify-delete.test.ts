/**
 * Modifying and deleting runs-domain objects over REST, with whole bodies: assistants (modify,
 * delete), threads (modify, delete with everything only it holds), messages (modify metadata,
 * delete), runs (modify metadata) and one run step. Unknown ids and other workspaces' ids are 404;
 * bad bodies are 400 naming the param; a thread with an active run refuses deletes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, unixSeconds } from '../../src/lib/clock.js';
import { MessageSchema } from '../../src/modules/runs/message.entity.js';
import { RunEventSchema } from '../../src/modules/runs/run-event.entity.js';
import { RunStepSchema } from '../../src/modules/runs/run-step.entity.js';
import { RunSchema } from '../../src/modules/runs/run.entity.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { error } from '../helpers/errors.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';
import { BETA, assistant, ok, startRun, thread, waitFor, waitingRun, weatherTool } from '../helpers/run-fixtures.js';

const START = new Date('2026-03-01T10:00:00.000Z');

let t: TestApp;
let clock: ManualClock;
let strangers: string[];
beforeAll(async () => {
  clock = new ManualClock(START);
  t = await createTestApp({}, { clock });
  strangers = [(await createWorkspaceWithKey(t, 'Modify team')).key, (await createOtherOrganisation(t, 'Modify org')).key];
});
afterAll(() => t.close());

const call = (method: string, path: string, body?: unknown, key?: string) => t.request(method, path, { body, headers: BETA, key });

async function expectError(method: string, path: string, body: unknown, status: number, expected: unknown, key?: string) {
  const r = await call(method, path, body, key);
  expect(r.status, `${method} ${path}`).toBe(status);
  expect(r.body, `${method} ${path}`).toEqual(expected);
}

describe('assistants', () => {
  it('POST /v1/assistants/{id}: keys given replace, keys left out stay, null resets; GET reads the same', async () => {
    const a = await assistant(t, { name: 'Old', description: 'desc', instructions: 'Be brief.', metadata: { a: '1' }, temperature: 0.5 });
    const changed = await ok(t, 'POST', `/v1/assistants/${a.id}`, { model: 'local-new', name: 'New', description: null, tools: [weatherTool], metadata: { b: '2' } }, BETA);
    const expected = {
      id: a.id,
      object: 'assistant',
      created_at: unixSeconds(START),
      name: 'New',
      description: null,
      model: 'local-new',
      instructions: 'Be brief.',
      tools: [weatherTool],
      tool_resources: {},
      metadata: { b: '2' },
      temperature: 0.5,
      top_p: 1,
      response_format: 'auto',
    };
    expect(changed).toEqual(expected);
    expect(await ok(t, 'GET', `/v1/assistants/${a.id}`, undefined, BETA)).toEqual(expected);
    // An empty body changes nothing.
    expect(await ok(t, 'POST', `/v1/assistants/${a.id}`, {}, BETA)).toEqual(expected);
  });

  it('bad input is 400 naming the param, and changes nothing', async () => {
    const a = await assistant(t);
    await expectError('POST', `/v1/assistants/${a.id}`, { model: null }, 400, error("Invalid type for 'model': expected a string, but got null instead.", 'model', 'invalid_type'));
    await expectError('POST', `/v1/assistants/${a.id}`, { temperature: 3 }, 400, error("Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead.", 'temperature', 'decimal_above_max_value'));
    expect(await ok(t, 'GET', `/v1/assistants/${a.id}`, undefined, BETA)).toEqual(a);
  });

  it('DELETE answers assistant.deleted; then 404; runs made from it stay readable', async () => {
    const started = await startRun(t, 'hello', {}, { tools: [] });
    await waitFor(t, started.thread.id, started.run.id, ['completed']);
    const id = started.assistant.id;
    expect(await ok(t, 'DELETE', `/v1/assistants/${id}`, undefined, BETA)).toEqual({ id, object: 'assistant.deleted', deleted: true });
    await expectError('GET', `/v1/assistants/${id}`, undefined, 404, error(`No assistant found with id '${id}'.`));
    await expectError('DELETE', `/v1/assistants/${id}`, undefined, 404, error(`No assistant found with id '${id}'.`));
    expect((await ok(t, 'GET', `/v1/threads/${started.thread.id}/runs/${started.run.id}`, undefined, BETA)).assistant_id).toBe(id);
  });

  it('404 for unknown ids and for another workspace’s or organisation’s assistant (which stays)', async () => {
    const a = await assistant(t);
    await expectError('POST', '/v1/assistants/asst_nope', { name: 'x' }, 404, error("No assistant found with id 'asst_nope'."));
    await expectError('DELETE', '/v1/assistants/asst_nope', undefined, 404, error("No assistant found with id 'asst_nope'."));
    for (const key of strangers) {
      await expectError('POST', `/v1/assistants/${a.id}`, { name: 'x' }, 404, error(`No assistant found with id '${a.id}'.`), key);
      await expectError('DELETE', `/v1/assistants/${a.id}`, undefined, 404, error(`No assistant found with id '${a.id}'.`), key);
    }
    expect(await ok(t, 'GET', `/v1/assistants/${a.id}`, undefined, BETA)).toEqual(a);
  });
});

describe('threads', () => {
  it('POST /v1/threads/{id} replaces metadata and tool_resources; null resets them', async () => {
    const th = await ok(t, 'POST', '/v1/threads', { metadata: { a: '1' }, tool_resources: { code_interpreter: { file_ids: ['f1'] } } }, BETA);
    const changed = await ok(t, 'POST', `/v1/threads/${th.id}`, { metadata: { b: '2' } }, BETA);
    expect(changed).toEqual({ id: th.id, object: 'thread', created_at: th.created_at, metadata: { b: '2' }, tool_resources: { code_interpreter: { file_ids: ['f1'] } } });
    expect(await ok(t, 'GET', `/v1/threads/${th.id}`, undefined, BETA)).toEqual(changed);
    expect(await ok(t, 'POST', `/v1/threads/${th.id}`, { tool_resources: null }, BETA)).toEqual({ ...changed, tool_resources: {} });
    await expectError('POST', `/v1/threads/${th.id}`, { metadata: { k: 1 } }, 400, error("Invalid type for 'metadata.k': expected a string, but got an integer instead.", 'metadata.k', 'invalid_type'));
    await expectError('POST', `/v1/threads/${th.id}`, { metadata: {}, messages: [] }, 400, error('Unrecognized request argument supplied: messages', 'messages', 'unknown_parameter'));
    expect(await ok(t, 'GET', `/v1/threads/${th.id}`, undefined, BETA)).toEqual({ ...changed, tool_resources: {} });
  });

  it('DELETE removes the thread, its messages, runs, steps and run events; then 404', async () => {
    const { thread: th, run, calls } = await waitingRun(t);
    await ok(t, 'POST', `/v1/threads/${th.id}/runs/${run.id}/submit_tool_outputs`, { tool_outputs: [{ tool_call_id: calls[0].id, output: 'sunny' }] });
    await waitFor(t, th.id, run.id, ['completed']);
    const em = t.app.runtime.fork();
    expect(await em.count(RunStepSchema, { threadId: th.id })).toBe(2);
    expect(await em.count(RunEventSchema, { runId: run.id })).toBeGreaterThan(0);

    expect(await ok(t, 'DELETE', `/v1/threads/${th.id}`, undefined, BETA)).toEqual({ id: th.id, object: 'thread.deleted', deleted: true });
    const after = t.app.runtime.fork();
    expect(await after.count(MessageSchema, { threadId: th.id })).toBe(0);
    expect(await after.count(RunSchema, { threadId: th.id })).toBe(0);
    expect(await after.count(RunStepSchema, { threadId: th.id })).toBe(0);
    expect(await after.count(RunEventSchema, { runId: run.id })).toBe(0);
    for (const path of [`/v1/threads/${th.id}`, `/v1/threads/${th.id}/messages`, `/v1/threads/${th.id}/runs/${run.id}`]) {
      await expectError('GET', path, undefined, 404, error(`No thread found with id '${th.id}'.`));
    }
    await expectError('DELETE', `/v1/threads/${th.id}`, undefined, 404, error(`No thread found with id '${th.id}'.`));
  });

  // A thread with many runs (copied in SQL, so SQLite only): their events and steps go through the runs.
  it.skipIf(onPostgres)('DELETE of a thread with 33,001 runs removes them all, with their events', async () => {
    const { thread: th, run } = await startRun(t, 'hello');
    await waitFor(t, th.id, run.id, ['completed']);
    const em = t.app.runtime.fork();
    const connection = em.getConnection();
    const columns = (await connection.execute<{ name: string }[]>('pragma table_info(runs)')).map((c: { name: string }) => c.name);
    const copied = columns.map((c: string) => (c === 'id' ? "r.id || '-' || n.i" : c === 'ordinal' ? 'r.ordinal + n.i' : `r.${c}`)).join(', ');
    await connection.execute(`with recursive n(i) as (select 1 union all select i + 1 from n where i < 33000) insert into runs (${columns.join(', ')}) select ${copied} from runs r, n where r.id = ?`, [run.id]);
    await connection.execute("insert into run_events (run_id, sequence, event, data, created_at) select r.id, 1, 'thread.run.created', '{}', r.created_at from runs r where r.thread_id = ? and r.id <> ?", [th.id, run.id]);
    expect(await em.count(RunSchema, { threadId: th.id })).toBe(33_001);

    expect(await ok(t, 'DELETE', `/v1/threads/${th.id}`, undefined, BETA)).toEqual({ id: th.id, object: 'thread.deleted', deleted: true });
    const after = t.app.runtime.fork();
    expect(await after.count(RunSchema, { threadId: th.id })).toBe(0);
    expect(await after.count(RunStepSchema, { threadId: th.id })).toBe(0);
    const [{ events }] = await after.getConnection().execute<{ events: number }[]>("select count(*) as events from run_events where run_id like ? || '%'", [run.id]);
    expect(events).toBe(0);
  });

  it('DELETE of a thread with an active run is refused (400) and removes nothing', async () => {
    const { thread: th, run } = await waitingRun(t);
    await expectError('DELETE', `/v1/threads/${th.id}`, undefined, 400, error(`Can't delete ${th.id} while a run ${run.id} is active.`));
    expect((await ok(t, 'GET', `/v1/threads/${th.id}/runs/${run.id}`, undefined, BETA)).status).toBe('requires_action');
    await ok(t, 'POST', `/v1/threads/${th.id}/runs/${run.id}/cancel`, undefined, BETA);
    await waitFor(t, th.id, run.id, ['cancelled']);
    expect((await ok(t, 'DELETE', `/v1/threads/${th.id}`, undefined, BETA)).deleted).toBe(true);
  });

  it('404 for unknown ids and for another workspace’s or organisation’s thread (which stays)', async () => {
    const th = await thread(t, 'keep me');
    await expectError('POST', '/v1/threads/thread_nope', {}, 404, error("No thread found with id 'thread_nope'."));
    await expectError('DELETE', '/v1/threads/thread_nope', undefined, 404, error("No thread found with id 'thread_nope'."));
    for (const key of strangers) {
      await expectError('POST', `/v1/threads/${th.id}`, { metadata: {} }, 404, error(`No thread found with id '${th.id}'.`), key);
      await expectError('DELETE', `/v1/threads/${th.id}`, undefined, 404, error(`No thread found with id '${th.id}'.`), key);
    }
    expect(await ok(t, 'GET', `/v1/threads/${th.id}`, undefined, BETA)).toEqual(th);
  });
});

describe('messages', () => {
  it('POST …/messages/{id} replaces metadata (also while a run is active); DELETE answers thread.message.deleted', async () => {
    const th = await thread(t, 'first');
    const [message] = (await ok(t, 'GET', `/v1/threads/${th.id}/messages`, undefined, BETA)).data;
    const changed = await ok(t, 'POST', `/v1/threads/${th.id}/messages/${message.id}`, { metadata: { tag: 'x' } }, BETA);
    expect(changed).toEqual({ ...message, metadata: { tag: 'x' } });
    expect(await ok(t, 'GET', `/v1/threads/${th.id}/messages/${message.id}`, undefined, BETA)).toEqual(changed);
    await expectError(
      'POST',
      `/v1/threads/${th.id}/messages/${message.id}`,
      { metadata: { ['k'.repeat(65)]: 'v' } },
      400,
      error("Invalid 'metadata': key too long. Expected a key with maximum length 64, but got a key with length 65 instead.", 'metadata', 'string_above_max_length'),
    );

    expect(await ok(t, 'DELETE', `/v1/threads/${th.id}/messages/${message.id}`, undefined, BETA)).toEqual({ id: message.id, object: 'thread.message.deleted', deleted: true });
    await expectError('GET', `/v1/threads/${th.id}/messages/${message.id}`, undefined, 404, error(`No message found with id '${message.id}'.`));
    expect((await ok(t, 'GET', `/v1/threads/${th.id}/messages`, undefined, BETA)).data).toEqual([]);
  });

  it('DELETE of a message of a thread with an active run is refused (400); metadata can still change', async () => {
    const { thread: th, run } = await waitingRun(t);
    const [message] = (await ok(t, 'GET', `/v1/threads/${th.id}/messages`, undefined, BETA)).data;
    await expectError('DELETE', `/v1/threads/${th.id}/messages/${message.id}`, undefined, 400, error(`Can't delete messages of ${th.id} while a run ${run.id} is active.`));
    expect((await ok(t, 'POST', `/v1/threads/${th.id}/messages/${message.id}`, { metadata: { seen: 'yes' } }, BETA)).metadata).toEqual({ seen: 'yes' });
  });

  it('404: unknown message, a message of another thread, other workspaces', async () => {
    const th = await thread(t, 'mine');
    const other = await thread(t, 'theirs');
    const [theirs] = (await ok(t, 'GET', `/v1/threads/${other.id}/messages`, undefined, BETA)).data;
    const [mine] = (await ok(t, 'GET', `/v1/threads/${th.id}/messages`, undefined, BETA)).data;
    for (const method of ['POST', 'DELETE']) {
      const body = method === 'POST' ? { metadata: {} } : undefined;
      await expectError(method, `/v1/threads/${th.id}/messages/msg_nope`, body, 404, error("No message found with id 'msg_nope'."));
      await expectError(method, `/v1/threads/${th.id}/messages/${theirs.id}`, body, 404, error(`No message found with id '${theirs.id}'.`));
      for (const key of strangers) await expectError(method, `/v1/threads/${th.id}/messages/${mine.id}`, body, 404, error(`No thread found with id '${th.id}'.`), key);
    }
    expect(await ok(t, 'GET', `/v1/threads/${other.id}/messages/${theirs.id}`, undefined, BETA)).toEqual(theirs);
  });
});

describe('runs and steps', () => {
  it('POST …/runs/{id} replaces metadata in any status; GET …/steps/{id} answers the whole step', async () => {
    const { thread: th, run } = await waitingRun(t);
    const waiting = await ok(t, 'POST', `/v1/threads/${th.id}/runs/${run.id}`, { metadata: { n: '1' } }, BETA);
    expect(waiting).toEqual({ ...run, metadata: { n: '1' } });
    await ok(t, 'POST', `/v1/threads/${th.id}/runs/${run.id}/cancel`, undefined, BETA);
    const cancelled = await waitFor(t, th.id, run.id, ['cancelled']);
    expect(cancelled.metadata).toEqual({ n: '1' });
    expect(await ok(t, 'POST', `/v1/threads/${th.id}/runs/${run.id}`, { metadata: null }, BETA)).toEqual({ ...cancelled, metadata: {} });
    await expectError('POST', `/v1/threads/${th.id}/runs/${run.id}`, { status: 'completed' }, 400, error('Unrecognized request argument supplied: status', 'status', 'unknown_parameter'));
    await expectError('POST', `/v1/threads/${th.id}/runs/${run.id}`, { metadata: 'x' }, 400, error("Invalid type for 'metadata': expected an object, but got a string instead.", 'metadata', 'invalid_type'));

    const steps = (await ok(t, 'GET', `/v1/threads/${th.id}/runs/${run.id}/steps`, undefined, BETA)).data;
    expect(steps).toHaveLength(1);
    expect(await ok(t, 'GET', `/v1/threads/${th.id}/runs/${run.id}/steps/${steps[0].id}`, undefined, BETA)).toEqual(steps[0]);
  });

  it('404: unknown run or step, a step of another run, other workspaces', async () => {
    const a = await waitingRun(t);
    const b = await waitingRun(t);
    const [stepA] = (await ok(t, 'GET', `/v1/threads/${a.thread.id}/runs/${a.run.id}/steps`, undefined, BETA)).data;
    const [stepB] = (await ok(t, 'GET', `/v1/threads/${b.thread.id}/runs/${b.run.id}/steps`, undefined, BETA)).data;
    await expectError('POST', `/v1/threads/${a.thread.id}/runs/run_nope`, { metadata: {} }, 404, error("No run found with id 'run_nope'."));
    await expectError('GET', `/v1/threads/${a.thread.id}/runs/${a.run.id}/steps/step_nope`, undefined, 404, error("No run step found with id 'step_nope'."));
    await expectError('GET', `/v1/threads/${a.thread.id}/runs/${a.run.id}/steps/${stepB.id}`, undefined, 404, error(`No run step found with id '${stepB.id}'.`));
    for (const key of strangers) {
      await expectError('POST', `/v1/threads/${a.thread.id}/runs/${a.run.id}`, { metadata: {} }, 404, error(`No thread found with id '${a.thread.id}'.`), key);
      await expectError('GET', `/v1/threads/${a.thread.id}/runs/${a.run.id}/steps/${stepA.id}`, undefined, 404, error(`No thread found with id '${a.thread.id}'.`), key);
    }
  });
});

describe('the same operations over GraphQL', () => {
  it('modifyRun / deleteThread answer the wire objects; bad input is the contract’s 400 with the wire param', async () => {
    const { thread: th, run } = await waitingRun(t);
    const modify = `mutation ($threadId: String!, $runId: String!, $input: ModifyMetadataInput!) {
      modifyRun(threadId: $threadId, runId: $runId, input: $input) { id metadata }
    }`;
    const changed = await t.graphql(modify, { threadId: th.id, runId: run.id, input: { metadata: { via: 'graphql' } } });
    expect(changed.data).toEqual({ modifyRun: { id: run.id, metadata: { via: 'graphql' } } });
    const bad = await t.graphql(modify, { threadId: th.id, runId: run.id, input: { metadata: { k: 1 } } });
    expect(bad.errors?.[0]).toMatchObject({
      message: "Invalid type for 'metadata.k': expected a string, but got an integer instead.",
      extensions: { status: 400, param: 'metadata.k', code: 'invalid_type' },
    });

    const remove = 'mutation ($id: String!) { deleteThread(id: $id) { id object deleted } }';
    expect((await t.graphql(remove, { id: th.id })).errors?.[0]).toMatchObject({ message: `Can't delete ${th.id} while a run ${run.id} is active.`, extensions: { status: 400 } });
    await ok(t, 'POST', `/v1/threads/${th.id}/runs/${run.id}/cancel`, undefined, BETA);
    await waitFor(t, th.id, run.id, ['cancelled']);
    expect((await t.graphql(remove, { id: th.id })).data).toEqual({ deleteThread: { id: th.id, object: 'thread.deleted', deleted: true } });
  });
});
