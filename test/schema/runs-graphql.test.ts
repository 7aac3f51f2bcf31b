/**
 * The runs domain through GraphQL: mutations (virtual key from the argument or the header),
 * nested reads batched by depth, and the runEvents subscription (replay, then live, no gap and
 * no duplicate) over graphql-sse.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { runExecutor } from '../../src/modules/runs/executor.js';
import { LocalModel } from '../../src/modules/runs/models/local-model.js';
import { BETA, slowLocal, useLocalModel } from '../helpers/run-fixtures.js';

let t: TestApp;
let queries: string[] = [];
let base: string;
beforeAll(async () => {
  // Keys stay cached for the whole file: a key lookup after the default 5 s expiry (a slow machine)
  // would be counted as one of a read's queries.
  t = await createTestApp({ API_KEY_CACHE_TTL_MS: 600_000 }, { onQuery: (sql) => queries.push(sql) });
  base = await t.listen();
});
afterAll(() => t.close());

async function gql(query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const response = await t.app.fetch(
    new Request('http://gatehouse.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': t.key, ...headers },
      body: JSON.stringify({ query, variables }),
    }),
  );
  return response.json() as Promise<{ data?: any; errors?: any[] }>;
}

async function setup(text: string, tools = true) {
  const a = await gql('mutation($i: CreateAssistantInput!) { createAssistant(input: $i) { id model tools } }', {
    i: { model: 'local-g', tools: tools ? [{ type: 'function', function: { name: 'lookup' } }] : [] },
  });
  const th = await gql('mutation($i: CreateThreadInput) { createThread(input: $i) { id } }', { i: { messages: [{ role: 'user', content: text }] } });
  return { assistantId: a.data.createAssistant.id as string, threadId: th.data.createThread.id as string };
}

async function until(threadId: string, runId: string, statuses: string[]) {
  for (let i = 0; i < 500; i++) {
    const r = await gql('query($t: String!, $r: String!) { run(threadId: $t, id: $r) { status } }', { t: threadId, r: runId });
    if (statuses.includes(r.data.run.status)) return r.data.run.status;
    await new Promise((res) => setTimeout(res, 5));
  }
  throw new Error('timeout');
}

describe('mutations', () => {
  it('createRun with a virtualKey argument, submitToolOutputs with the header, cancelRun', async () => {
    const { assistantId, threadId } = await setup('please lookup this');
    const created = await gql(
      'mutation($t: String!, $i: CreateRunInput!) { createRun(threadId: $t, input: $i, virtualKey: "local") { id status streamAfter } }',
      { t: threadId, i: { assistantId, metadata: { via: 'graphql' } } },
    );
    expect(created.errors).toBeUndefined();
    expect(created.data.createRun).toMatchObject({ status: 'queued', streamAfter: 0 });
    const runId = created.data.createRun.id;
    await until(threadId, runId, ['requires_action']);
    const pending = await gql('query($t: String!, $r: String!) { run(threadId: $t, id: $r) { requiredAction { type submitToolOutputs { toolCalls { id function { name arguments } } } } } }', { t: threadId, r: runId });
    const call = pending.data.run.requiredAction.submitToolOutputs.toolCalls[0];
    expect(call.function).toEqual({ name: 'lookup', arguments: JSON.stringify({ input: 'please lookup this' }) });

    const noKey = await gql(
      'mutation($t: String!, $r: String!, $i: SubmitToolOutputsInput!) { submitToolOutputs(threadId: $t, runId: $r, input: $i) { status } }',
      { t: threadId, r: runId, i: { toolOutputs: [{ toolCallId: call.id, output: 'found it' }] } },
    );
    expect(noKey.errors?.[0].extensions).toMatchObject({ status: 400, code: 'missing_virtual_key' });
    const submitted = await gql(
      'mutation($t: String!, $r: String!, $i: SubmitToolOutputsInput!) { submitToolOutputs(threadId: $t, runId: $r, input: $i) { status requiredAction { type } streamAfter } }',
      { t: threadId, r: runId, i: { toolOutputs: [{ toolCallId: call.id, output: 'found it' }] } },
      { 'x-gateway-virtual-key': 'local' },
    );
    expect(submitted.data.submitToolOutputs).toEqual({ status: 'queued', requiredAction: null, streamAfter: 6 });
    expect(await until(threadId, runId, ['completed'])).toBe('completed');

    const cancel = await gql('mutation($t: String!, $r: String!) { cancelRun(threadId: $t, runId: $r) { status } }', { t: threadId, r: runId });
    expect(cancel.errors?.[0]).toMatchObject({ message: "Cannot cancel run with status 'completed'.", extensions: { status: 400 } });
  });

  it('the same validation as REST, with wire names in param', async () => {
    const { assistantId, threadId } = await setup('x');
    const r = await gql('mutation($t: String!, $i: CreateRunInput!) { createRun(threadId: $t, input: $i, virtualKey: "local") { id } }', {
      t: threadId,
      i: { assistantId, maxCompletionTokens: 100 },
    });
    expect(r.errors?.[0]).toMatchObject({
      message: "Invalid 'max_completion_tokens': integer below minimum value. Expected a value >= 256, but got 100 instead.",
      extensions: { status: 400, param: 'max_completion_tokens', code: 'integer_below_min_value' },
    });
  });
});

describe('nested reads', () => {
  it('threads { messages runs { steps events } }: queries grow with depth, not with rows', async () => {
    for (let i = 0; i < 4; i++) {
      const { assistantId, threadId } = await setup(`hello ${i}`, false);
      const r = await gql('mutation($t: String!, $i: CreateRunInput!) { createRun(threadId: $t, input: $i, virtualKey: "local") { id } }', { t: threadId, i: { assistantId } });
      await until(threadId, r.data.createRun.id, ['completed']);
    }
    const query = `{ threads(limit: 4) { data { id messages(order: "asc") { data { role content { text { value } } } } runs { data { status usage { totalTokens } steps { data { type status } } } } } } }`;
    // A run is seen completed before its job has told the run-finished hooks (settlement may read
    // its enforcement records): wait for the jobs, then count the reads' own selects (the request
    // log's timed batches are writes).
    await runExecutor(t.app.runtime).whenIdle();
    const selects = () => queries.filter((sql) => /^\s*select/i.test(sql)).length;
    queries = [];
    const few = await gql(query.replace('limit: 4', 'limit: 1'));
    const one = selects();
    queries = [];
    const many = await gql(query);
    expect(many.errors).toBeUndefined();
    expect(many.data.threads.data).toHaveLength(4);
    expect(few.data.threads.data).toHaveLength(1);
    expect(one).toBeGreaterThan(0);
    expect(selects()).toBe(one);
    const first = many.data.threads.data[0];
    expect(first.messages.data.map((m: any) => m.role)).toEqual(['user', 'assistant']);
    expect(first.runs.data[0]).toMatchObject({ status: 'completed', steps: { data: [{ type: 'message_creation', status: 'completed' }] } });
  });

  it('Run.events lists the event log', async () => {
    const { assistantId, threadId } = await setup('log me', false);
    const r = await gql('mutation($t: String!, $i: CreateRunInput!) { createRun(threadId: $t, input: $i, virtualKey: "local") { id } }', { t: threadId, i: { assistantId } });
    await until(threadId, r.data.createRun.id, ['completed']);
    const events = await gql('query($t: String!, $r: String!) { run(threadId: $t, id: $r) { events(after: 2, limit: 2) { sequence event data } } }', { t: threadId, r: r.data.createRun.id });
    expect(events.data.run.events.map((e: any) => [e.sequence, e.event])).toEqual([
      [3, 'thread.run.in_progress'],
      [4, 'thread.run.step.created'],
    ]);
    expect(events.data.run.events[0].data).toMatchObject({ object: 'thread.run', status: 'in_progress' });
  });
});

describe('runEvents subscription', () => {
  it('replays after `after`, then follows live events to the terminal one, without gap or duplicate', async () => {
    slowLocal(t, { delayMs: 10, tokensPerDelta: 1 });
    try {
      const { assistantId, threadId } = await setup('one two three four five six', false);
      const r = await gql('mutation($t: String!, $i: CreateRunInput!) { createRun(threadId: $t, input: $i, virtualKey: "local") { id } }', { t: threadId, i: { assistantId } });
      const runId = r.data.createRun.id;
      await until(threadId, runId, ['in_progress']);
      await new Promise((res) => setTimeout(res, 40));
      const client = createClient({ url: `${base}/graphql/stream`, headers: { 'x-gateway-api-key': t.key } });
      const seen: { sequence: number; event: string }[] = [];
      for await (const result of client.iterate({
        query: 'subscription($t: String!, $r: String!) { runEvents(threadId: $t, runId: $r, after: 1) { sequence event } }',
        variables: { t: threadId, r: runId },
      })) {
        seen.push((result.data as any).runEvents);
      }
      client.dispose();
      expect(seen.map((e) => e.sequence)).toEqual(seen.map((_, i) => i + 2));
      expect(seen[0].event).toBe('thread.run.queued');
      expect(seen.at(-1)!.event).toBe('thread.run.completed');
      const log = await t.request('GET', `/v1/threads/${threadId}/runs/${runId}/events`, { headers: BETA });
      expect(log.text.match(/^event: /gm)!.length - 1).toBe(seen.length + 1);
    } finally {
      useLocalModel(t, () => new LocalModel());
    }
  });

  it('follows across a tool-output round unless endAtRequiresAction; an unknown run is an error', async () => {
    const { assistantId, threadId } = await setup('lookup please');
    const r = await gql('mutation($t: String!, $i: CreateRunInput!) { createRun(threadId: $t, input: $i, virtualKey: "local") { id } }', { t: threadId, i: { assistantId } });
    const runId = r.data.createRun.id;
    await until(threadId, runId, ['requires_action']);
    const client = createClient({ url: `${base}/graphql/stream`, headers: { 'x-gateway-api-key': t.key } });
    const paused: string[] = [];
    for await (const result of client.iterate({
      query: 'subscription($t: String!, $r: String!) { runEvents(threadId: $t, runId: $r, endAtRequiresAction: true) { event } }',
      variables: { t: threadId, r: runId },
    })) paused.push((result.data as any).runEvents.event);
    expect(paused.at(-1)).toBe('thread.run.requires_action');

    const following = (async () => {
      const all: string[] = [];
      for await (const result of client.iterate({ query: 'subscription($t: String!, $r: String!) { runEvents(threadId: $t, runId: $r) { event } }', variables: { t: threadId, r: runId } })) {
        all.push((result.data as any).runEvents.event);
      }
      return all;
    })();
    for (let i = 0; i < 100 && t.app.runtime.pubsub.listenerCount(`runEvents:${runId}`) === 0; i++) await new Promise((res) => setTimeout(res, 10));
    const pending = await gql('query($t: String!, $r: String!) { run(threadId: $t, id: $r) { requiredAction { submitToolOutputs { toolCalls { id } } } } }', { t: threadId, r: runId });
    await gql(
      'mutation($t: String!, $r: String!, $i: SubmitToolOutputsInput!) { submitToolOutputs(threadId: $t, runId: $r, input: $i, virtualKey: "local") { status } }',
      { t: threadId, r: runId, i: { toolOutputs: [{ toolCallId: pending.data.run.requiredAction.submitToolOutputs.toolCalls[0].id, output: 'x' }] } },
    );
    const all = await following;
    expect(all).toContain('thread.run.requires_action');
    expect(all.at(-1)).toBe('thread.run.completed');

    client.dispose();

    // An unknown run is refused when subscribing, before any event.
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-gateway-api-key': t.key },
      body: JSON.stringify({ query: 'subscription { runEvents(threadId: "thread_nope", runId: "run_nope") { event } }' }),
    });
    expect(await response.text()).toContain("No thread found with id 'thread_nope'.");
  });
});
