/**
 * Two real server processes on one PostgreSQL database behave as one gateway: events of a run
 * executed on B reach a follower on A live and in order, and so do usage alerts; rate limits and budgets hold exactly
 * across both; a key revoked on A is refused by B within a second; after `kill -9` of A, B settles
 * every run A held (queued ones run, the one in progress fails as interrupted) and none runs twice.
 * Needs TEST_DATABASE_URL (PostgreSQL): SQLite is one process per database file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, testDatabase, type TestDatabase } from '../helpers/database.js';
import { BETA, call, KEY, ok, startInstance, stopInstances, waitTerminal, type Instance } from '../helpers/instances.js';

const DATA_PLANE = { 'x-gateway-virtual-key': 'local', ...BETA };

/** The run's logged events (`event` names and ids), read through REST. */
async function loggedEvents(instance: Instance, threadId: string, runId: string): Promise<{ id: number; event: string }[]> {
  const text = (await call(instance, 'GET', `/v1/threads/${threadId}/runs/${runId}/events`, undefined, BETA)).body as string;
  return sseEvents(text);
}

function sseEvents(text: string): { id: number; event: string }[] {
  return [...text.matchAll(/^event: (\S+)\nid: (\d+)$/gm)].map((m) => ({ event: m[1], id: Number(m[2]) }));
}

describe.skipIf(!onPostgres)('two gateway instances on one PostgreSQL database', () => {
  let database: TestDatabase;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    database = await testDatabase('sqlite::memory:');
    // A first: it bootstraps the empty database; B finds it bootstrapped. A runs one run at a time
    // (runs pile up in its queue for the kill -9 test).
    a = await startInstance('A', database.url, { RUN_CONCURRENCY: '1' });
    b = await startInstance('B', database.url);
  }, 120_000);

  afterAll(async () => {
    await stopInstances([a, b]);
    await database?.release();
  }, 60_000);

  it('a REST follower and a graphql-sse subscriber on A see, live and in order, the events of a run B executes', async () => {
    const assistant = await ok(a, 'POST', '/v1/assistants', { model: 'local-test', tools: [{ type: 'function', function: { name: 'get_weather' } }] }, BETA);
    const thread = await ok(a, 'POST', '/v1/threads', { messages: [{ role: 'user', content: 'get_weather for Paris' }] }, BETA);
    const created = await ok(b, 'POST', `/v1/threads/${thread.id}/runs`, { assistant_id: assistant.id }, DATA_PLANE);
    const waiting = await waitTerminal(b, thread.id, created.id);
    expect(waiting.status).toBe('requires_action');
    const before = await loggedEvents(a, thread.id, created.id);
    const after = before[before.length - 1].id;

    // The subscription is open on A before B does anything more: what it gets comes live.
    const sse = await fetch(`${a.base}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-gateway-api-key': KEY },
      body: JSON.stringify({
        query: 'subscription($t: String!, $r: String!, $after: Int) { runEvents(threadId: $t, runId: $r, after: $after) { sequence event } }',
        variables: { t: thread.id, r: created.id, after },
      }),
    });
    expect(sse.status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const call0 = waiting.required_action.submit_tool_outputs.tool_calls[0];
    await ok(b, 'POST', `/v1/threads/${thread.id}/runs/${created.id}/submit_tool_outputs`, { tool_outputs: [{ tool_call_id: call0.id, output: 'sunny' }] }, DATA_PLANE);

    // A REST stream ends at requires_action, so it is opened once the outputs are in: it replays what
    // is logged and follows the rest live.
    const restText = await (await fetch(`${a.base}/v1/threads/${thread.id}/runs/${created.id}/events?after=${after}`, { headers: { 'x-gateway-api-key': KEY, ...BETA } })).text();
    const sseText = await sse.text();
    const logged = (await loggedEvents(b, thread.id, created.id)).filter((e) => e.id > after);
    expect(logged.at(-1)!.event).toBe('thread.run.completed');
    expect(logged.map((e) => e.id)).toEqual(logged.map((_, i) => after + 1 + i));
    expect(sseEvents(restText)).toEqual(logged);
    expect(restText.endsWith('event: done\ndata: [DONE]\n\n')).toBe(true);
    const subscribed = [...sseText.matchAll(/^data: (\{.*\})$/gm)]
      .map((m) => JSON.parse(m[1]).data?.runEvents)
      .filter(Boolean)
      .map((e: { sequence: number; event: string }) => ({ event: e.event, id: e.sequence }));
    expect(subscribed).toEqual(logged);
  });

  it('200 concurrent requests split across A and B admit exactly the rate limit', async () => {
    await ok(a, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, rate_limits: [{ type: 'requests', unit: 'rph', value: 37 }] }] });
    try {
      // B hears of the change through the invalidation A published.
      await new Promise((r) => setTimeout(r, 300));
      const statuses = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          call(i % 2 ? a : b, 'POST', '/v1/chat/completions', { model: '@local/local', messages: [{ role: 'user', content: `hi ${i}` }] }).then((r) => r.status),
        ),
      );
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      expect(statuses.filter((s) => s === 200)).toHaveLength(37);
    } finally {
      await ok(a, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, rate_limits: null }] });
    }
  });

  it('a usageAlerts subscriber on A gets the alert of usage recorded on B', async () => {
    const policy = await ok(a, 'POST', '/v1/policies/usage-limits', {
      name: 'Alerting',
      conditions: [{ key: 'metadata.app', value: 'alerts' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      credit_limit: 1_000_000,
      alert_threshold: 1,
    });
    const abort = new AbortController();
    try {
      const stream = await fetch(`${a.base}/graphql/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-gateway-api-key': KEY },
        body: JSON.stringify({ query: 'subscription { usageAlerts { kind ownerId currentUsage alertThreshold createdAt } }' }),
        signal: abort.signal,
      });
      expect(stream.status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
      await ok(b, 'POST', '/v1/chat/completions', { model: '@local/local', messages: [{ role: 'user', content: 'hello there' }] }, { 'x-gateway-metadata': '{"app":"alerts"}' });
      const reader = stream.body!.getReader();
      let text = '';
      const until = Date.now() + 10_000;
      while (!/"usageAlerts"/.test(text) && Date.now() < until) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += new TextDecoder().decode(chunk.value);
      }
      const alert = JSON.parse(text.match(/^data: (\{.*"usageAlerts".*\})$/m)![1]).data.usageAlerts;
      expect(alert).toMatchObject({ kind: 'threshold', ownerId: policy.id, alertThreshold: 1 });
      expect(alert.currentUsage).toBeGreaterThan(0);
      expect(Number.isNaN(Date.parse(alert.createdAt))).toBe(false);
    } finally {
      abort.abort();
      await ok(a, 'DELETE', `/v1/policies/usage-limits/${policy.id}`);
    }
  });

  it('100 concurrent runs split across A and B keep a budget’s cap; its usage is the runs’ usage', async () => {
    const assistant = await ok(a, 'POST', '/v1/assistants', { model: 'local-test' }, BETA);
    const text = Array.from({ length: 100 }, (_, i) => `w${i % 10}`).join(' ');
    const limit = 2000;
    const policy = await ok(a, 'POST', '/v1/policies/usage-limits', {
      name: 'Shared budget',
      conditions: [{ key: 'workspace_id', value: '*' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      credit_limit: limit,
    });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const responses = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          call(i % 2 ? a : b, 'POST', '/v1/threads/runs', { assistant_id: assistant.id, max_completion_tokens: 256, thread: { messages: [{ role: 'user', content: text }] } }, DATA_PLANE),
        ),
      );
      expect(responses.filter((r) => r.status !== 200 && r.status !== 412)).toEqual([]);
      const admitted = responses.filter((r) => r.status === 200).map((r) => r.body);
      expect(admitted.length).toBeGreaterThanOrEqual(3);
      expect(admitted.length).toBeLessThan(30);
      const runs = await Promise.all(admitted.map((run, i) => waitTerminal(i % 2 ? a : b, run.thread_id, run.id)));
      expect(runs.map((run) => run.status)).toEqual(runs.map(() => 'completed'));
      const usages = runs.map((run) => run.usage.total_tokens as number);
      const total = usages.reduce((x, y) => x + y, 0);
      expect(total).toBeLessThanOrEqual(limit + Math.max(...usages));
      // Usage settles just after the terminal status shows: wait for the bucket to hold the total.
      const until = Date.now() + 10_000;
      let current = -1;
      while (current !== total && Date.now() < until) {
        const usage = (await ok(b, 'GET', `/v1/policies/usage-limits/${policy.id}`)).value_key_usage_map;
        current = Object.values(usage as Record<string, { current_usage: number }>).reduce((x, y) => x + y.current_usage, 0);
        if (current !== total) await new Promise((r) => setTimeout(r, 100));
      }
      expect(current).toBe(total);
    } finally {
      await ok(a, 'DELETE', `/v1/policies/usage-limits/${policy.id}`);
    }
  });

  it('a key revoked on A is refused by B within one second', async () => {
    const created = await ok(a, 'POST', '/v1/admin/api-keys', { name: 'short-lived', type: 'organisation' });
    // B has the key in its cache (API_KEY_CACHE_TTL_MS is 5 s by default).
    expect((await call(b, 'GET', '/v1/assistants', undefined, BETA, created.key)).status).toBe(200);
    expect((await call(b, 'GET', '/v1/assistants', undefined, BETA, created.key)).status).toBe(200);
    await ok(a, 'DELETE', `/v1/admin/api-keys/${created.id}`);
    const revokedAt = Date.now();
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < 1_000) {
      status = (await call(b, 'GET', '/v1/assistants', undefined, BETA, created.key)).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(401);
  });

  it('kill -9 of A with runs in flight: B settles each as the contract says, and none runs twice', async () => {
    const assistant = await ok(a, 'POST', '/v1/assistants', { model: 'local-test' }, BETA);
    const text = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ');
    // A executes one at a time: most of these are still queued on A, one in progress, when it dies.
    const created: any[] = [];
    for (let i = 0; i < 12; i++) {
      created.push(await ok(a, 'POST', '/v1/threads/runs', { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: text }] } }, DATA_PLANE));
    }
    a.child.kill('SIGKILL');
    await a.exited;

    const runs = await Promise.all(created.map((run) => waitTerminal(b, run.thread_id, run.id, 40_000)));
    for (const run of runs) {
      if (run.status === 'failed') expect(run.last_error).toEqual({ code: 'server_error', message: 'The run was interrupted by a gateway restart before it finished.' });
      else expect(run.status).toBe('completed');
      const events = (await loggedEvents(b, run.thread_id, run.id)).map((e) => e.event);
      // Executed once: one start, one end.
      expect(events.filter((e) => e === 'thread.run.in_progress').length).toBeLessThanOrEqual(1);
      expect(events.filter((e) => e === 'thread.run.completed' || e === 'thread.run.failed')).toHaveLength(1);
      const messages = await ok(b, 'GET', `/v1/threads/${run.thread_id}/messages`, undefined, BETA);
      expect(messages.data.filter((m: { role: string }) => m.role === 'assistant').length).toBeLessThanOrEqual(1);
    }
    // B took over what A left (the queued ones at least): not everything had finished on A.
    expect(b.output()).toContain('runs taken over from a stopped instance');
  }, 90_000);
});
