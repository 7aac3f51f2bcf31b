/**
 * Conformance with the published documents (test/conformance/documents/): one app drives a complete
 * scenario over every /v1 route, the test app records each response, and every body (and every
 * streamed event of the runs and chat routes) is validated against the schema of the document
 * operation it answers (method + path template + status), closed to extra keys. Deliberate
 * differences and known pending mismatches are listed in differences.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../rest/routes.js';
import { createTestApp, type RecordedResponse, type TestApp } from '../helpers/app.js';
import { root } from '../helpers/source-files.js';
import { BETA, H, parseSse, waitFor, weatherTool } from '../helpers/run-fixtures.js';
import { check, describeProblem, type Problem } from './check.js';
import { documents } from './documents.js';
import { documented, pending, pendingFor, statusStandIns, streamStandIns } from './differences.js';

/** Gatehouse's own routes, which neither document describes (README's route list says what they do). */
const GATEHOUSE_ONLY = [
  'GET /v1/admin/api-keys',
  'POST /v1/admin/api-keys',
  'DELETE /v1/admin/api-keys/:id',
  'GET /v1/threads/:thread_id/runs/:run_id/events',
  'GET /v1/logs',
  'GET /v1/openapi.json',
];

let t: TestApp;
let recorded: RecordedResponse[];

/** A call that must succeed (any 2xx); answers the body. */
async function ok(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await t.request(method, path, { body, headers });
  if (response.status < 200 || response.status > 299) throw new Error(`${method} ${path} → ${response.status} ${response.text}`);
  return response.body;
}

async function control() {
  const workspace = await ok('POST', '/v1/admin/workspaces', { name: 'Conformance', description: 'checked against the documents' });
  await ok('GET', '/v1/admin/workspaces');
  await ok('GET', `/v1/admin/workspaces/${workspace.id}`);
  const key = await ok('POST', '/v1/admin/api-keys', { name: 'ci', type: 'workspace', workspace_id: 'default' });
  await ok('GET', '/v1/admin/api-keys');
  await ok('DELETE', `/v1/admin/api-keys/${key.id}`);

  await ok('GET', '/v1/integrations');
  await ok('POST', '/v1/integrations', {
    name: 'OpenAI production',
    slug: 'openai-prod',
    description: 'Team account',
    ai_provider_id: 'openai',
    key: 'sk-conformance-0123456789',
    configurations: { base_url: 'https://api.openai.example/v1', default_model: 'gpt-4o-mini', prices: { 'gpt-4o-mini': { input: 0.2, output: 0.8 } } },
  });
  await ok('POST', '/v1/integrations', { name: 'Bare', slug: 'bare', ai_provider_id: 'openai', key: 'sk-bare-0123456789' });
  await ok('GET', '/v1/integrations');
  await ok('GET', '/v1/integrations/openai-prod');
  await ok('GET', '/v1/integrations/bare');
  await ok('GET', '/v1/integrations/local');
  await ok('PUT', '/v1/integrations/openai-prod', { description: 'Renamed account' });
  await ok('PUT', '/v1/integrations/openai-prod/workspaces', {
    workspaces: [{ id: 'default', enabled: true, usage_limits: [{ type: 'cost', credit_limit: 100, periodic_reset: 'monthly' }], rate_limits: [{ unit: 'rpm', value: 100 }] }],
    global_workspace_access: { enabled: false },
  });
  await ok('GET', '/v1/integrations/openai-prod/workspaces');
  await ok('PUT', '/v1/integrations/openai-prod/models', {
    allow_all_models: true,
    models: [
      { slug: 'house-model', enabled: true, is_custom: true, pricing_config: { type: 'static', pay_as_you_go: { request_token: { price: 0.0001 }, response_token: { price: 0.0002 } } } },
      { slug: 'my-finetune', enabled: false, is_custom: true, is_finetune: true, base_model_slug: 'gpt-4o-mini' },
    ],
  });
  await ok('GET', '/v1/integrations/openai-prod/models');
  await ok('DELETE', '/v1/integrations/openai-prod/models?slugs=my-finetune');
  await ok('DELETE', '/v1/integrations/bare');

  await ok('GET', '/v1/providers');
  await ok('POST', '/v1/providers', { integration_id: 'openai-prod', slug: 'openai-strict', name: 'Strict', note: 'checked' });
  await ok('GET', '/v1/providers/openai-strict');
  await ok('GET', '/v1/providers/local');
  await ok('PUT', '/v1/providers/openai-strict', { name: 'Stricter' });
  await ok('DELETE', '/v1/providers/openai-strict');

  const collection = await ok('POST', '/v1/collections', { name: 'Prompts' });
  await ok('GET', '/v1/collections');
  await ok('GET', `/v1/collections/${collection.id}`);
  await ok('PUT', `/v1/collections/${collection.id}`, { name: 'Prompts, renamed' });
  await ok('DELETE', `/v1/collections/${collection.id}`);

  const policy = await ok('POST', '/v1/policies/usage-limits', {
    name: 'Tokens per key',
    conditions: [{ key: 'workspace_id', value: '*' }],
    group_by: [{ key: 'api_key' }],
    type: 'tokens',
    credit_limit: 1_000_000,
  });
  await ok('GET', '/v1/policies/usage-limits');
  await ok('GET', `/v1/policies/usage-limits/${policy.id}`);
  await ok('PUT', `/v1/policies/usage-limits/${policy.id}`, { name: 'Tokens per key, renamed' });

  const jwt = await ok('POST', '/v1/guardrails', {
    name: 'JWT gate',
    checks: [{ id: 'default.jwt', parameters: { jwksUri: 'https://issuer.test/.well-known/jwks.json', headerKey: 'Authorization', algorithms: ['RS256'] } }],
    actions: { deny: true, async: false, on_success: { feedback: { value: 5, weight: 1, metadata: '' } }, on_fail: { feedback: { value: -5, weight: 1, metadata: '' } } },
  });
  await ok('GET', '/v1/guardrails');
  await ok('GET', `/v1/guardrails/${jwt.id}`);
  await ok('PUT', `/v1/guardrails/${jwt.id}`, { name: 'JWT gate, renamed' });
  await ok('DELETE', `/v1/guardrails/${jwt.id}`);
  return { policy };
}

async function runs() {
  const assistant = await ok('POST', '/v1/assistants', { model: 'local-test', name: 'Weather', instructions: 'Be brief.', tools: [weatherTool], metadata: { team: 'a' } }, H);
  await ok('GET', '/v1/assistants', undefined, BETA);
  await ok('GET', `/v1/assistants/${assistant.id}`, undefined, BETA);
  await ok('POST', `/v1/assistants/${assistant.id}`, { description: 'Answers about weather' }, BETA);
  const spare = await ok('POST', '/v1/assistants', { model: 'local-test' }, BETA);
  await ok('DELETE', `/v1/assistants/${spare.id}`, undefined, BETA);

  const empty = await ok('POST', '/v1/threads', {}, BETA);
  await ok('GET', `/v1/threads/${empty.id}/messages`, undefined, BETA);
  await ok('GET', `/v1/threads/${empty.id}/runs`, undefined, BETA);
  await ok('GET', `/v1/threads/${empty.id}`, undefined, BETA);
  await ok('POST', `/v1/threads/${empty.id}`, { metadata: { topic: 'none' } }, BETA);
  const message = await ok('POST', `/v1/threads/${empty.id}/messages`, { role: 'user', content: 'hello', metadata: { n: '1' } }, BETA);
  await ok('GET', `/v1/threads/${empty.id}/messages/${message.id}`, undefined, BETA);
  await ok('POST', `/v1/threads/${empty.id}/messages/${message.id}`, { metadata: { n: '2' } }, BETA);
  await ok('GET', `/v1/threads/${empty.id}/messages`, undefined, BETA);
  await ok('DELETE', `/v1/threads/${empty.id}/messages/${message.id}`, undefined, BETA);
  await ok('DELETE', `/v1/threads/${empty.id}`, undefined, BETA);

  // A text run, read back with its steps.
  const thread = await ok('POST', '/v1/threads', { messages: [{ role: 'user', content: 'say something' }] }, BETA);
  const run = await ok('POST', `/v1/threads/${thread.id}/runs`, { assistant_id: assistant.id }, H);
  await waitFor(t, thread.id, run.id, ['completed']);
  await ok('GET', `/v1/threads/${thread.id}/runs`, undefined, BETA);
  await ok('POST', `/v1/threads/${thread.id}/runs/${run.id}`, { metadata: { checked: 'yes' } }, BETA);
  const steps = await ok('GET', `/v1/threads/${thread.id}/runs/${run.id}/steps`, undefined, BETA);
  await ok('GET', `/v1/threads/${thread.id}/runs/${run.id}/steps/${steps.data[0].id}`, undefined, BETA);
  await ok('GET', `/v1/threads/${thread.id}/messages`, undefined, BETA);
  await ok('GET', `/v1/threads/${thread.id}/runs/${run.id}/events?after=0`, undefined, BETA);

  // Tool rounds: submitted as JSON, submitted streamed, and cancelled.
  const toolRun = async (body: Record<string, unknown> = {}) => {
    const th = await ok('POST', '/v1/threads', { messages: [{ role: 'user', content: 'get_weather for Paris' }] }, BETA);
    const started = await ok('POST', `/v1/threads/${th.id}/runs`, { assistant_id: assistant.id, ...body }, H);
    const waiting = await waitFor(t, th.id, started.id, ['requires_action']);
    return { thread: th, run: waiting, callId: waiting.required_action.submit_tool_outputs.tool_calls[0].id as string };
  };
  const json = await toolRun();
  await ok('POST', `/v1/threads/${json.thread.id}/runs/${json.run.id}/submit_tool_outputs`, { tool_outputs: [{ tool_call_id: json.callId, output: 'sunny' }] }, H);
  await waitFor(t, json.thread.id, json.run.id, ['completed']);
  const toolSteps = await ok('GET', `/v1/threads/${json.thread.id}/runs/${json.run.id}/steps`, undefined, BETA);
  await ok('GET', `/v1/threads/${json.thread.id}/runs/${json.run.id}/steps/${toolSteps.data.at(-1).id}`, undefined, BETA);
  const streamed = await toolRun();
  await ok('POST', `/v1/threads/${streamed.thread.id}/runs/${streamed.run.id}/submit_tool_outputs`, { tool_outputs: [{ tool_call_id: streamed.callId, output: 'rain' }], stream: true }, H);
  const cancelled = await toolRun();
  await ok('POST', `/v1/threads/${cancelled.thread.id}/runs/${cancelled.run.id}/cancel`, undefined, BETA);

  // Streams of create run (a tool call and a text answer) and create thread and run.
  const streamThread = await ok('POST', '/v1/threads', { messages: [{ role: 'user', content: 'get_weather for Rome' }] }, BETA);
  await ok('POST', `/v1/threads/${streamThread.id}/runs`, { assistant_id: assistant.id, stream: true }, H);
  const textThread = await ok('POST', '/v1/threads', { messages: [{ role: 'user', content: 'a streamed answer' }] }, BETA);
  await ok('POST', `/v1/threads/${textThread.id}/runs`, { assistant_id: assistant.id, stream: true, tools: [] }, H);
  await ok('POST', '/v1/threads/runs', { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'one call' }] }, stream: true }, H);
  // Cut short by max_completion_tokens (at least 256; the local model echoes the message): incomplete, JSON and streamed.
  const long = 'word '.repeat(300);
  const cut = await ok('POST', '/v1/threads/runs', { assistant_id: assistant.id, tools: [], max_completion_tokens: 256, thread: { messages: [{ role: 'user', content: long }] } }, H);
  await waitFor(t, cut.thread_id, cut.id, ['incomplete']);
  await ok('GET', `/v1/threads/${cut.thread_id}/messages`, undefined, BETA);
  await ok('POST', '/v1/threads/runs', { assistant_id: assistant.id, tools: [], max_completion_tokens: 256, response_format: { type: 'json_object' }, stream: true, thread: { messages: [{ role: 'user', content: long }] } }, H);
  const both = await ok('POST', '/v1/threads/runs', { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'another call' }] } }, H);
  await waitFor(t, both.thread_id, both.id, ['completed']);
  await ok('GET', `/v1/threads/${both.thread_id}/runs/${both.id}`, undefined, BETA);
  return { assistant };
}

async function modelTraffic() {
  await ok('POST', '/v1/chat/completions', { model: '@local/local', messages: [{ role: 'user', content: 'hello' }] });
  await ok('POST', '/v1/chat/completions', { model: '@local/local', messages: [{ role: 'user', content: 'hello stream' }], stream: true, stream_options: { include_usage: true } });
  await ok('POST', '/v1/chat/completions', {
    model: '@local/local',
    messages: [{ role: 'user', content: 'get_weather now' }],
    tools: [weatherTool],
  });
  await ok('POST', '/v1/chat/completions', { model: '@local/local', messages: [{ role: 'user', content: 'get_weather streamed' }], tools: [weatherTool], stream: true });
  await ok('POST', '/v1/chat/completions', { model: '@local/local', messages: [{ role: 'user', content: 'two answers' }], n: 2, max_tokens: 2, response_format: { type: 'json_object' } });
  await ok('POST', '/v1/embeddings', { model: '@local/local', input: ['one', 'two'] });
  await ok('POST', '/v1/embeddings', { model: '@local/local', input: 'base64', encoding_format: 'base64' });
  await ok('GET', '/v1/models');
  await ok('GET', '/v1/logs');
}

const TEMPLATE = JSON.stringify([
  { role: 'system', content: 'You answer questions about {{product}}.' },
  { role: 'user', content: 'Question: {{question}}' },
]);

async function prompts() {
  const collection = await ok('POST', '/v1/collections', { name: 'Support' });
  const created = await ok('POST', '/v1/prompts', {
    name: 'Support reply',
    collection_id: collection.id,
    string: TEMPLATE,
    parameters: { temperature: 0.3, max_tokens: 200 },
    model: 'local',
    virtual_key: 'local',
    version_description: 'First cut',
    tools: [weatherTool],
    tool_choice: 'auto',
    template_metadata: { owner: 'support' },
  });
  await ok('GET', '/v1/prompts');
  await ok('GET', `/v1/prompts/${created.id}`);
  await ok('PUT', `/v1/prompts/${created.id}`, { parameters: { temperature: 0.9 }, version_description: 'Warmer' });
  await ok('GET', `/v1/prompts/${created.id}/versions`);
  await ok('GET', `/v1/prompts/${created.id}/versions/${created.version_id}`);
  await ok('PUT', `/v1/prompts/${created.id}/versions/${created.version_id}`, { label_id: '4f0c6a0e-1b7e-4d43-9d38-2d3c3b6f1a10' });
  const variables = { product: 'Gatehouse', question: 'what is it?' };
  await ok('POST', `/v1/prompts/${created.id}/render`, { variables });
  // The object form of tool_choice renders as stored; then version 1 (the string form) is made the default again.
  await ok('PUT', `/v1/prompts/${created.id}`, { tool_choice: { type: 'function', function: { name: 'get_weather' } } });
  await ok('POST', `/v1/prompts/${created.id}/render`, { variables });
  await ok('PUT', `/v1/prompts/${created.id}/makeDefault`, { version: 1 });
  await ok('POST', `/v1/prompts/${created.id}/completions`, { variables });
  await ok('POST', `/v1/prompts/${created.id}/completions`, { variables, stream: true });
  await ok('DELETE', `/v1/prompts/${created.id}`);
}

/** The policy's entities once the model traffic above has settled (chat settles right after answering). */
async function policyEntities(policyId: string) {
  for (let i = 0; i < 300; i++) {
    const entities = await ok('GET', `/v1/policies/usage-limits/${policyId}/entities`);
    if (entities.data.length > 0) {
      await ok('PUT', `/v1/policies/usage-limits/${policyId}/entities/${encodeURIComponent(entities.data[0].id)}/reset`, {});
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the policy counted no entity');
}

/** Guardrails on the `local` provider: a failed soft check answers 246, an output deny fails a run. */
async function guarded(assistantId: string) {
  const soft = await ok('POST', '/v1/guardrails', { name: 'Must say please', checks: [{ id: 'default.regexMatch', parameters: { rule: 'please' } }], actions: { deny: false } });
  const noSecrets = await ok('POST', '/v1/guardrails', { name: 'No secrets out', checks: [{ id: 'default.regexMatch', parameters: { rule: 'secret', not: true } }], actions: { deny: true } });
  await ok('PUT', '/v1/providers/local', { input_guardrails: [soft.slug], output_guardrails: [noSecrets.slug] });
  await ok('POST', '/v1/chat/completions', { model: '@local/local', messages: [{ role: 'user', content: 'no magic word' }] });
  const thread = await ok('POST', '/v1/threads', { messages: [{ role: 'user', content: 'tell the secret please' }] }, BETA);
  const run = await ok('POST', `/v1/threads/${thread.id}/runs`, { assistant_id: assistantId, tools: [] }, H);
  await waitFor(t, thread.id, run.id, ['failed']);
  const steps = await ok('GET', `/v1/threads/${thread.id}/runs/${run.id}/steps`, undefined, BETA);
  await ok('GET', `/v1/threads/${thread.id}/runs/${run.id}/steps/${steps.data[0].id}`, undefined, BETA);
  const streamThread = await ok('POST', '/v1/threads', { messages: [{ role: 'user', content: 'stream the secret please' }] }, BETA);
  await ok('POST', `/v1/threads/${streamThread.id}/runs`, { assistant_id: assistantId, tools: [], stream: true }, H);
  await ok('PUT', '/v1/providers/local', { input_guardrails: [], output_guardrails: [] });
}

interface Outcome {
  response: RecordedResponse;
  route: string | undefined;
  documented: boolean;
  validated: boolean;
  problems: Problem[];
}
let outcomes: Outcome[];

/** Scenario parts that failed: each part goes on without them, so one broken route hides no other's check. */
const failures: string[] = [];

async function part<T>(name: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (error) {
    failures.push(`${name}: ${(error as Error).message}`);
    return undefined;
  }
}

beforeAll(async () => {
  documents();
  t = await createTestApp();
  recorded = t.recordResponses();
  const controlled = await part('control plane', control);
  const ran = await part('runs', runs);
  await part('model traffic', modelTraffic);
  await part('prompts', prompts);
  if (controlled) await part('policy entities', () => policyEntities(controlled.policy.id));
  if (ran) await part('guardrails on the local provider', () => guarded(ran.assistant.id));
  if (controlled) await part('policy archive', () => ok('DELETE', `/v1/policies/usage-limits/${controlled.policy.id}`));
  outcomes = recorded.map((response) => {
    const { operation, documented, validated, problems } = check(response);
    return { response, route: operation && `${operation.method} ${operation.template}`, documented, validated, problems };
  });
}, 120_000);
afterAll(() => t?.close());

const allProblems = () => outcomes.flatMap((outcome) => outcome.problems);

describe('conformance with the published OpenAI and Portkey documents', () => {
  it('every call of the scenario succeeded', () => {
    expect(failures).toEqual([]);
  });

  it('every response body and streamed event matches its document operation, closed to extra keys', () => {
    const unexplained = allProblems().filter((problem) => !pendingFor(problem));
    expect(unexplained.map(describeProblem)).toEqual([]);
  });

  it('every route of the route table that a document describes answered at least once with a documented success', () => {
    const docs = documents();
    const unchecked = routes
      .filter((row) => !GATEHOUSE_ONLY.includes(`${row.method} ${row.path}`))
      .filter((row) => {
        const template = row.path.replace(/:([A-Za-z_]+)/g, 'x-$1');
        const operation = docs.operationFor(row.method, template);
        if (!operation) return true;
        const route = `${operation.method} ${operation.template}`;
        return !outcomes.some((outcome) => outcome.route === route && outcome.documented && outcome.response.status < 300);
      })
      .map((row) => `${row.method} ${row.path}`);
    expect(unchecked).toEqual([]);
  });

  it('the routes neither document describes are exactly the named Gatehouse-only ones', () => {
    const docs = documents();
    const own = routes.filter((row) => !docs.operationFor(row.method, row.path.replace(/:([A-Za-z_]+)/g, 'x-$1'))).map((row) => `${row.method} ${row.path}`);
    expect(own.sort()).toEqual([...GATEHOUSE_ONLY].sort());
  });

  it('the runs and chat streams were checked event by event', () => {
    const streams = outcomes.filter((outcome) => outcome.response.contentType?.startsWith('text/event-stream'));
    const routesStreamed = new Set(streams.map((outcome) => outcome.route ?? `${outcome.response.method} ${outcome.response.path.replace(/\/thread_[^/?]+|\/run_[^/?]+/g, '/{id}')}`));
    expect([...routesStreamed].sort()).toEqual(
      [
        'GET /threads/{thread_id}/runs/{run_id}/events',
        'POST /chat/completions',
        'POST /prompts/{promptId}/completions',
        'POST /threads/runs',
        'POST /threads/{thread_id}/runs',
        'POST /threads/{thread_id}/runs/{run_id}/submit_tool_outputs',
      ].sort(),
    );
    const events = streams.flatMap((outcome) => parseSse(outcome.response.text).map((message) => message.event));
    expect(new Set(events)).toEqual(
      new Set([
        'message',
        'thread.created',
        'thread.run.created',
        'thread.run.queued',
        'thread.run.in_progress',
        'thread.run.requires_action',
        'thread.run.completed',
        'thread.run.incomplete',
        'thread.run.failed',
        'thread.run.step.created',
        'thread.run.step.in_progress',
        'thread.run.step.completed',
        'thread.run.step.failed',
        'thread.message.created',
        'thread.message.in_progress',
        'thread.message.delta',
        'thread.message.completed',
        'thread.message.incomplete',
        'done',
      ]),
    );
  });

  it('each pending mismatch still happens (take it off differences.ts once fixed)', () => {
    const problems = allProblems();
    const stale = pending.filter((mismatch) => !problems.some((problem) => pendingFor(problem) === mismatch)).map((mismatch) => mismatch.name);
    expect(stale).toEqual([]);
  });

  it("each documented difference is explained in README's section", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    // Compared with the lines' wrapping undone.
    const section = readme.slice(readme.indexOf('## Where Gatehouse answers differently'), readme.indexOf('## Routes')).replace(/\s+/g, ' ');
    const missing = [...documented, ...statusStandIns, ...streamStandIns].map((d) => d.readme).filter((phrase) => !section.includes(phrase));
    expect(missing).toEqual([]);
  });

  it('the check refuses an extra key, a wrong type, an undocumented success status and an undocumented stream event', () => {
    const run = outcomes.find((o) => o.route === 'GET /threads/{thread_id}/runs/{run_id}' && o.response.status === 200)!.response;
    const spoiled = (body: unknown): RecordedResponse => ({ ...run, body });
    expect(check(run).problems).toEqual([]);
    expect(check(spoiled({ ...run.body, surplus: 1 })).problems.map((p) => p.message)).toEqual(["extra key 'surplus'"]);
    expect(check(spoiled({ ...run.body, usage: { ...run.body.usage, extra_tokens: 1 } })).problems.map((p) => `${p.path} ${p.message}`)).toContain("/usage extra key 'extra_tokens'");
    expect(check(spoiled({ ...run.body, created_at: 'now' })).problems.map((p) => p.path)).toContain('/created_at');
    expect(check({ ...run, status: 201 }).problems.map((p) => p.message)).toEqual(['a success status the document does not give for this operation']);
    const stream = outcomes.find((o) => o.route === 'POST /threads/runs' && o.response.contentType?.startsWith('text/event-stream'))!.response;
    expect(check(stream).problems).toEqual([]);
    expect(check({ ...stream, text: `event: thread.run.surprise\ndata: {}\n\n${stream.text}` }).problems.map((p) => p.message)).toEqual(["event 'thread.run.surprise' is not an AssistantStreamEvent"]);
    const composed = outcomes.find((o) => o.route === 'GET /threads/{thread_id}/messages' && o.response.body.data.length > 0)!.response;
    expect(check({ ...composed, body: { ...composed.body, data: [{ ...composed.body.data[0], surplus: true }] } }).problems.map((p) => `${p.path} ${p.message}`)).toEqual(["/data/0 extra key 'surplus'"]);
  });
});
