/**
 * A run's usage settles on whichever instance ends it, whatever instance admitted each of its
 * steps. A create to which nothing applied writes no enforcement record, so the instance that
 * created the run knows of no reservation; a tool-output submission admitted on another instance
 * (a policy created in between) holds one. When the run then ends on the creating instance (a
 * cancel there), that instance must read the run's records and settle the submission's segment:
 * knowing only its own admissions, it would leave the reservation held and the usage uncounted.
 * Needs TEST_DATABASE_URL (PostgreSQL): SQLite is one process per database file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, testDatabase, type TestDatabase } from '../helpers/database.js';
import { RUN_ENFORCEMENT } from '../helpers/enforcement.js';
import { startFakeOpenAI, toolCallsReply, type FakeOpenAI } from '../helpers/fake-openai-server.js';
import { BETA, call, ok, startInstance, stopInstances, waitTerminal, type Instance } from '../helpers/instances.js';

const DATA_PLANE = { 'x-gateway-virtual-key': 'upstream', ...BETA };
/** What each model call uses: every call answers with a tool call, so the run waits after each. */
const CALL_USAGE = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 };

describe.skipIf(!onPostgres)('a run admitted on two instances, ended on the one that created it', () => {
  let database: TestDatabase;
  let fake: FakeOpenAI;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    database = await testDatabase('sqlite::memory:');
    let calls = 0;
    fake = await startFakeOpenAI(() => toolCallsReply([{ id: `call_${++calls}`, name: 'get_weather', arguments: '{"city":"Paris"}' }], { usage: CALL_USAGE }));
    a = await startInstance('A', database.url);
    b = await startInstance('B', database.url);
    await ok(a, 'POST', '/v1/integrations', { name: 'Upstream', slug: 'upstream', ai_provider_id: 'openai', key: 'sk-upstream', configurations: { base_url: fake.url } });
    await ok(a, 'PUT', '/v1/integrations/upstream/workspaces', { workspaces: [{ id: 'default', enabled: true }] });
  }, 120_000);

  afterAll(async () => {
    await stopInstances([a, b]);
    await fake?.close();
    await database?.release();
  }, 60_000);

  it('a submission admitted on B with a reservation is settled when A cancels the run', async () => {
    const assistant = await ok(a, 'POST', '/v1/assistants', { model: 'gpt-4o-mini', tools: [{ type: 'function', function: { name: 'get_weather' } }] }, BETA);
    const created = await ok(a, 'POST', '/v1/threads/runs', { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'Weather in Paris?' }] } }, DATA_PLANE);
    const first = await waitTerminal(a, created.thread_id, created.id);
    expect(first.status).toBe('requires_action');

    // Nothing applied to the create; the submission gets a budget (B hears of it through A's invalidation).
    const policy = await ok(a, 'POST', '/v1/policies/usage-limits', {
      name: 'Created mid-run',
      conditions: [{ key: 'workspace_id', value: '*' }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      credit_limit: 1_000_000,
    });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const callId = first.required_action.submit_tool_outputs.tool_calls[0].id;
      await ok(b, 'POST', `/v1/threads/${created.thread_id}/runs/${created.id}/submit_tool_outputs`, { tool_outputs: [{ tool_call_id: callId, output: 'sunny' }] }, DATA_PLANE);
      const second = await waitTerminal(b, created.thread_id, created.id);
      expect(second.status).toBe('requires_action');
      expect(second.required_action.submit_tool_outputs.tool_calls[0].id).not.toBe(callId);

      // A ends the run: it created it, B admitted the submission.
      expect((await ok(a, 'POST', `/v1/threads/${created.thread_id}/runs/${created.id}/cancel`, undefined, BETA)).status).toBe('cancelling');
      expect((await waitTerminal(a, created.thread_id, created.id)).status).toBe('cancelled');

      // The submission's segment is the second model call: settled on the policy, the reservation given back.
      const query = `query($t: String!, $r: String!) { run(threadId: $t, id: $r) { status ${RUN_ENFORCEMENT} } }`;
      let submit: any = null;
      const until = Date.now() + 10_000;
      while (!submit?.settlement && Date.now() < until) {
        const r = await call(a, 'POST', '/graphql', { query, variables: { t: created.thread_id, r: created.id } });
        expect(r.body.errors).toBeUndefined();
        submit = r.body.data.run.enforcement.admissions.find((x: { kind: string }) => x.kind === 'submit_tool_outputs');
        if (!submit?.settlement) await new Promise((r) => setTimeout(r, 100));
      }
      expect(submit.limits.map((l: { ownerId: string }) => l.ownerId)).toEqual([policy.id]);
      expect(submit.settlement).toMatchObject({ action: 'settled', totalTokens: CALL_USAGE.total_tokens });
      const usage = (await ok(b, 'GET', `/v1/policies/usage-limits/${policy.id}`)).value_key_usage_map as Record<string, { current_usage: number }>;
      expect(Object.values(usage).map((u) => u.current_usage)).toEqual([CALL_USAGE.total_tokens]);
    } finally {
      await ok(a, 'DELETE', `/v1/policies/usage-limits/${policy.id}`);
    }
  }, 60_000);
});
