import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectBothDoors } from '../helpers/both-doors.js';
import { errorResponse } from '../helpers/errors.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';

/*
 * The prompt routes (Portkey's prompt API) over REST: whole bodies, versions, labels, render with
 * Mustache variables, refusals through both front doors, and tenancy.
 */

const T0 = '2026-11-22T10:00:00.000Z';
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

let t: TestApp;
let clock: ManualClock;
let collectionId: string;

beforeAll(async () => {
  clock = new ManualClock(new Date(T0));
  t = await createTestApp({}, { clock });
  collectionId = (await t.request('POST', '/v1/collections', { body: { name: 'Support' } })).body.id;
});
afterAll(() => t.close());

async function ok(method: string, path: string, body?: unknown, key?: string): Promise<any> {
  const r = await t.request(method, path, { body, key });
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(200);
  return r.body;
}

const CHAT_TEMPLATE = JSON.stringify([
  { role: 'system', content: 'You answer questions about {{product}}.{{#polite}} Be polite.{{/polite}}' },
  { role: 'user', content: [{ type: 'text', text: 'Question: {{question}}' }] },
]);

describe('create, read, update, versions', () => {
  it('POST creates version 1; GET answers Portkey’s Prompt; PUT writes version 2 keeping what it omits', async () => {
    const created = await ok('POST', '/v1/prompts', {
      name: 'Support reply',
      collection_id: 'support',
      string: CHAT_TEMPLATE,
      parameters: { temperature: 0.3, max_tokens: 200 },
      model: 'gpt-4o-mini',
      virtual_key: 'local',
      version_description: 'First cut',
      tools: [{ type: 'function', function: { name: 'lookup_order' } }],
      tool_choice: { type: 'function', function: { name: 'lookup_order' } },
      template_metadata: { owner: 'support-team' },
    });
    expect(created).toEqual({ id: UUID, slug: 'support-reply', version_id: UUID, object: 'prompt' });

    const first = await ok('GET', '/v1/prompts/support-reply');
    expect(first).toEqual({
      id: created.id,
      slug: 'support-reply',
      name: 'Support reply',
      collection_id: collectionId,
      string: CHAT_TEMPLATE,
      parameters: { temperature: 0.3, max_tokens: 200 },
      prompt_version: 1,
      prompt_version_id: created.version_id,
      prompt_version_description: 'First cut',
      virtual_key: 'local',
      model: 'gpt-4o-mini',
      tools: [{ type: 'function', function: { name: 'lookup_order' } }],
      tool_choice: { type: 'function', function: { name: 'lookup_order' } },
      template_metadata: { owner: 'support-team' },
      status: 'active',
      created_at: T0,
      last_updated_at: T0,
    });

    clock.advance(1000);
    const updated = await ok('PUT', `/v1/prompts/${created.id}`, { patch: true, parameters: { temperature: 0.9 }, version_description: 'Warmer' });
    expect(updated).toEqual({ id: created.id, slug: 'support-reply', prompt_version_id: UUID });
    expect(updated.prompt_version_id).not.toBe(created.version_id);
    const second = await ok('GET', '/v1/prompts/support-reply');
    expect(second).toMatchObject({
      string: CHAT_TEMPLATE,
      parameters: { temperature: 0.9 },
      prompt_version: 2,
      prompt_version_id: updated.prompt_version_id,
      prompt_version_description: 'Warmer',
      virtual_key: 'local',
      model: 'gpt-4o-mini',
      created_at: T0,
      last_updated_at: new Date(Date.parse(T0) + 1000).toISOString(),
    });

    const versions = await ok('GET', '/v1/prompts/support-reply/versions');
    expect(versions).toEqual([
      {
        id: updated.prompt_version_id,
        prompt_id: created.id,
        prompt_template: {
          string: CHAT_TEMPLATE,
          model: 'gpt-4o-mini',
          parameters: { temperature: 0.9 },
          virtual_key: 'local',
          tools: [{ type: 'function', function: { name: 'lookup_order' } }],
          tool_choice: { type: 'function', function: { name: 'lookup_order' } },
          template_metadata: { owner: 'support-team' },
        },
        prompt_version: 2,
        prompt_description: 'Warmer',
        created_at: new Date(Date.parse(T0) + 1000).toISOString(),
        object: 'prompt',
      },
      expect.objectContaining({ id: created.version_id, prompt_version: 1, prompt_description: 'First cut', created_at: T0 }),
    ]);

    // A kept version reads as the prompt was then, and takes a label (its content never changes).
    const old = await ok('GET', `/v1/prompts/${created.id}/versions/${created.version_id}`);
    expect(old).toEqual({ ...first, last_updated_at: second.last_updated_at });
    const label = '4f0c6a0e-1b7e-4d43-9d38-2d3c3b6f1a10';
    expect(await ok('PUT', `/v1/prompts/support-reply/versions/${created.version_id}`, { label_id: label })).toEqual({});
    expect((await ok('GET', `/v1/prompts/support-reply/versions/${created.version_id}`)).prompt_version_label_id).toBe(label);
    expect(await ok('PUT', `/v1/prompts/support-reply/versions/${created.version_id}`, { label_id: null })).toEqual({});
    expect(await ok('GET', `/v1/prompts/support-reply/versions/${created.version_id}`)).not.toHaveProperty('prompt_version_label_id');
  });

  it('a plain prompt leaves out the settings it does not have; lists page and filter; DELETE archives', async () => {
    clock.advance(1000);
    const other = (await t.request('POST', '/v1/collections', { body: { name: 'Sales' } })).body.id;
    const plain = await ok('POST', '/v1/prompts', { name: 'Plain one', collection_id: other, string: 'Hello {{name}}', model: 'local' });
    const read = await ok('GET', `/v1/prompts/${plain.slug}`);
    expect(Object.keys(read).sort()).toEqual(
      ['collection_id', 'created_at', 'id', 'last_updated_at', 'model', 'name', 'parameters', 'prompt_version', 'prompt_version_id', 'slug', 'status', 'string'].sort(),
    );
    expect(read.parameters).toEqual({});

    const all = await ok('GET', '/v1/prompts');
    expect(all.total).toBe(2);
    expect(all.data[0]).toEqual({
      id: plain.id,
      slug: 'plain-one',
      name: 'Plain one',
      collection_id: other,
      model: 'local',
      status: 'active',
      created_at: read.created_at,
      last_updated_at: read.created_at,
      object: 'prompt',
    });
    expect((await ok('GET', '/v1/prompts?collection_id=sales')).data.map((p: any) => p.slug)).toEqual(['plain-one']);
    expect((await ok('GET', '/v1/prompts?search=SUPPORT')).data.map((p: any) => p.slug)).toEqual(['support-reply']);
    expect(await ok('GET', '/v1/prompts?page_size=1&current_page=1')).toMatchObject({ total: 2, data: [{ slug: 'support-reply' }] });

    // Moving to another collection of the workspace is an update too.
    await ok('PUT', `/v1/prompts/${plain.id}`, { collection_id: collectionId });
    expect(await ok('GET', `/v1/prompts/${plain.id}`)).toMatchObject({ collection_id: collectionId, prompt_version: 2 });

    expect(await ok('DELETE', `/v1/prompts/${plain.id}`)).toEqual({});
    expect((await ok('GET', '/v1/prompts')).total).toBe(1);
    expect(await ok('GET', `/v1/prompts/${plain.id}`)).toMatchObject({ status: 'archived' });
    expect(await t.request('PUT', `/v1/prompts/${plain.id}`, { body: { name: 'Again' } })).toMatchObject(
      errorResponse(400, 'Archived prompts cannot be changed.', 'promptId', 'prompt_archived'),
    );
    expect(await t.request('POST', `/v1/prompts/${plain.id}/render`, { body: { variables: {} } })).toMatchObject(
      errorResponse(400, 'Archived prompts cannot be used.', 'promptId', 'prompt_archived'),
    );
  });
});

describe('render', () => {
  it('fills Mustache variables; a missing one renders as nothing; hyperparameters override; messages are added', async () => {
    const rendered = await ok('POST', '/v1/prompts/support-reply/render', {
      variables: { product: 'Gatehouse', question: 'Is it "fast"?', polite: true },
      temperature: 0.1,
      messages: [{ role: 'assistant', content: 'Earlier answer' }],
      prompt_id: 'support-reply',
    });
    expect(rendered).toEqual({
      success: true,
      data: {
        temperature: 0.1,
        model: 'gpt-4o-mini',
        tools: [{ type: 'function', function: { name: 'lookup_order' } }],
        tool_choice: { type: 'function', function: { name: 'lookup_order' } },
        messages: [
          { role: 'system', content: 'You answer questions about Gatehouse. Be polite.' },
          { role: 'user', content: [{ type: 'text', text: 'Question: Is it "fast"?' }] },
          { role: 'assistant', content: 'Earlier answer' },
        ],
      },
    });

    const bare = await ok('POST', '/v1/prompts/support-reply/render', { variables: {} });
    expect(bare.data.messages).toEqual([
      { role: 'system', content: 'You answer questions about .' },
      { role: 'user', content: [{ type: 'text', text: 'Question: ' }] },
    ]);
    expect(bare.data.temperature).toBe(0.9);
  });

  it('a plain-text template is one user message, values not HTML-escaped', async () => {
    const created = await ok('POST', '/v1/prompts', { name: 'Greeter', collection_id: collectionId, string: 'Hi {{name}} <{{tag}}>', model: 'local' });
    const rendered = await ok('POST', `/v1/prompts/${created.id}/render`, { variables: { name: "O'Brien", tag: 'b&c' } });
    expect(rendered.data).toEqual({ model: 'local', messages: [{ role: 'user', content: "Hi O'Brien <b&c>" }] });

    // tool_choice takes OpenAI's string forms too.
    await ok('PUT', `/v1/prompts/${created.id}`, { tool_choice: 'required', tools: [{ type: 'function', function: { name: 'greet' } }] });
    expect((await ok('POST', `/v1/prompts/${created.id}/render`, { variables: {} })).data).toMatchObject({ tool_choice: 'required' });
    expect(await t.request('PUT', `/v1/prompts/${created.id}`, { body: { tool_choice: 'sometimes' } })).toMatchObject(
      errorResponse(400, "Invalid value: 'sometimes'. Supported values are: 'none', 'auto' and 'required'.", 'tool_choice', 'invalid_value'),
    );
    // The prompt answers the object form its document names, render the chat request's string form.
    expect((await ok('GET', `/v1/prompts/${created.id}`)).tool_choice).toEqual({ type: 'required' });
    await ok('PUT', `/v1/prompts/${created.id}`, { tool_choice: { type: 'auto' } });
    expect((await ok('POST', `/v1/prompts/${created.id}/render`, { variables: {} })).data.tool_choice).toBe('auto');
    expect((await ok('GET', `/v1/prompts/${created.id}/versions`))[0].prompt_template.tool_choice).toEqual({ type: 'auto' });
    expect(await t.request('PUT', `/v1/prompts/${created.id}`, { body: { tool_choice: { type: 'auto', extra: 1 } } })).toMatchObject(
      errorResponse(400, 'Unrecognized request argument supplied: extra', 'tool_choice.extra', 'unknown_parameter'),
    );
  });
});

describe('makeDefault', () => {
  it('makes a kept version the one GET, render and completions use; later updates keep it until another is made the default', async () => {
    const created = await ok('POST', '/v1/prompts', { name: 'Pinned', collection_id: collectionId, string: 'One {{x}}', model: 'local', virtual_key: 'local' });
    await ok('PUT', `/v1/prompts/${created.id}`, { string: 'Two {{x}}' });
    const render = async () => (await ok('POST', '/v1/prompts/pinned/render', { variables: { x: '!' } })).data.messages[0].content;
    expect(await render()).toBe('Two !');

    expect(await ok('PUT', '/v1/prompts/pinned/makeDefault', { version: 1 })).toEqual({});
    expect(await render()).toBe('One !');
    expect(await ok('GET', '/v1/prompts/pinned')).toMatchObject({ prompt_version: 1, prompt_version_id: created.version_id, string: 'One {{x}}' });
    const completion = await ok('POST', '/v1/prompts/pinned/completions', { variables: { x: '!' } });
    expect(completion.body.choices[0].message.content).toBe('You said: One !');

    // An update adds version 3, backfilled from the latest (2), and leaves the default at 1.
    const third = await ok('PUT', '/v1/prompts/pinned', { parameters: { temperature: 0.5 } });
    expect(await render()).toBe('One !');
    const versions = await ok('GET', '/v1/prompts/pinned/versions');
    expect(versions.map((v: any) => [v.prompt_version, v.prompt_template.string])).toEqual([[3, 'Two {{x}}'], [2, 'Two {{x}}'], [1, 'One {{x}}']]);
    expect(versions[0].id).toBe(third.prompt_version_id);

    await ok('PUT', '/v1/prompts/pinned/makeDefault', { version: 3 });
    expect(await ok('POST', '/v1/prompts/pinned/render', { variables: { x: '?' } })).toMatchObject({ data: { temperature: 0.5, messages: [{ content: 'Two ?' }] } });

    const DEFAULT = 'query { prompt(idOrSlug: "pinned") { version defaultVersion { version } currentVersion { version } } }';
    expect((await t.graphql(DEFAULT)).data.prompt).toEqual({ version: 3, defaultVersion: { version: 3 }, currentVersion: { version: 3 } });
  });

  it('refuses a version that is not a number, an unknown version, an unknown or archived prompt', async () => {
    const MAKE = 'mutation($input: MakeDefaultPromptInput!) { makePromptVersionDefault(promptId: "support-reply", input: $input) { id } }';
    expect(await t.request('PUT', '/v1/prompts/support-reply/makeDefault', { body: { version: '1' } })).toMatchObject(
      errorResponse(400, "Invalid type for 'version': expected a number, but got a string instead.", 'version', 'invalid_type'),
    );
    await expectBothDoors(
      t.request('PUT', '/v1/prompts/support-reply/makeDefault', { body: { version: 0 } }),
      t.graphql(MAKE, { input: { version: 0 } }),
      "Invalid value for 'version': expected a version number, from 1.",
      'version',
      'invalid_value',
    );
    expect(await t.request('PUT', '/v1/prompts/support-reply/makeDefault', { body: {} })).toMatchObject(
      errorResponse(400, "Missing required parameter: 'version'.", 'version', 'missing_required_parameter'),
    );
    expect(await t.request('PUT', '/v1/prompts/support-reply/makeDefault', { body: { version: 99 } })).toMatchObject(
      errorResponse(404, 'Prompt version 99 not found.', 'version', 'prompt_not_found'),
    );
    expect(await t.request('PUT', '/v1/prompts/no-such/makeDefault', { body: { version: 1 } })).toMatchObject(
      errorResponse(404, 'Prompt not found.', 'promptId', 'prompt_not_found'),
    );
    const archived = await ok('POST', '/v1/prompts', { name: 'Gone soon', collection_id: collectionId, string: 'x', model: 'local' });
    await ok('DELETE', `/v1/prompts/${archived.id}`);
    expect(await t.request('PUT', `/v1/prompts/${archived.id}/makeDefault`, { body: { version: 1 } })).toMatchObject(
      errorResponse(400, 'Archived prompts cannot be changed.', 'promptId', 'prompt_archived'),
    );
  });
});

describe('GraphQL', () => {
  it('createPromptCompletion runs the rendered prompt through chat; the virtualKey argument names the provider', async () => {
    const created = await ok('POST', '/v1/prompts', { name: 'Graph echo', collection_id: collectionId, string: 'Echo {{word}}', model: 'local' });
    const COMPLETE = `mutation($id: String!, $input: JSON!, $vk: String) {
      createPromptCompletion(promptId: $id, input: $input, virtualKey: $vk) { completion streamId }
    }`;
    const plain = await t.graphql(COMPLETE, { id: created.slug, input: { variables: { word: 'graph' } }, vk: 'local' });
    expect(plain.errors).toBeUndefined();
    expect(plain.data.createPromptCompletion).toMatchObject({
      completion: { object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'You said: Echo graph' } }] },
      streamId: null,
    });
    const streamed = await t.graphql(COMPLETE, { id: created.id, input: { variables: { word: 'x' }, stream: true }, vk: 'local' });
    expect(streamed.data.createPromptCompletion).toEqual({ completion: null, streamId: expect.stringMatching(/^chatstream_/) });
    const missing = await t.graphql(COMPLETE, { id: created.id, input: { variables: {} } });
    expect(missing.errors?.[0]).toMatchObject({ extensions: { status: 400, code: 'missing_virtual_key' } });
  });
});

describe('bad input: the documented envelope, the same through both front doors', () => {
  const CREATE = 'mutation($input: CreatePromptInput!) { createPrompt(input: $input) { id } }';
  const UPDATE = 'mutation($input: UpdatePromptInput!) { updatePrompt(promptId: "support-reply", input: $input) { id } }';
  const RENDER = 'query($input: JSON!) { renderPrompt(promptId: "support-reply", input: $input) }';
  const base = () => ({ name: 'Bad', collection_id: collectionId, string: 'x', model: 'local' });
  const camel = (body: Record<string, unknown>) => Object.fromEntries(Object.entries(body).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()), v]));

  it('create', async () => {
    const both = (body: Record<string, unknown>, message: string, param: string, code: string) =>
      expectBothDoors(t.request('POST', '/v1/prompts', { body }), t.graphql(CREATE, { input: camel(body) }), message, param, code);
    const { string: _s, ...noTemplate } = base();
    await both(noTemplate, "Missing required parameter: 'string'.", 'string', 'missing_required_parameter');
    await both({ ...base(), string: '  ' }, "Invalid 'string': empty string. Expected a string with minimum length 1, but got an empty string instead.", 'string', 'empty_string');
    await both({ ...base(), string: 'Hi {{#open}}' }, `Invalid 'string': not a valid Mustache template: Unclosed section "open" at 12.`, 'string', 'invalid_value');
    await both({ ...base(), string: 'Hi {{> footer}}' }, "Invalid 'string': partials ({{> name}}) are not supported.", 'string', 'invalid_value');
    await both(
      { ...base(), string: '[{"role":"robot","content":"x"}]' },
      "Invalid 'string': message 0 of the JSON message list needs a 'role' (system, developer, user, assistant, tool) and a 'content' (a string or an array of parts).",
      'string',
      'invalid_value',
    );
    await both({ ...base(), parameters: 'hot' }, "Invalid type for 'parameters': expected an object, but got a string instead.", 'parameters', 'invalid_type');
    await both({ ...base(), tools: [1] }, "Invalid type for 'tools[0]': expected an object, but got an integer instead.", 'tools[0]', 'invalid_type');
  });

  it('update, render, unknown keys', async () => {
    await expectBothDoors(
      t.request('PUT', '/v1/prompts/support-reply', { body: { model: '' } }),
      t.graphql(UPDATE, { input: { model: '' } }),
      "Invalid 'model': empty string. Expected a string with minimum length 1, but got an empty string instead.",
      'model',
      'empty_string',
    );
    await expectBothDoors(
      t.request('POST', '/v1/prompts/support-reply/render', { body: { temperature: 1 } }),
      t.graphql(RENDER, { input: { temperature: 1 } }),
      "Missing required parameter: 'variables'.",
      'variables',
      'missing_required_parameter',
    );
    await expectBothDoors(
      t.request('POST', '/v1/prompts/support-reply/render', { body: { variables: [] } }),
      t.graphql(RENDER, { input: { variables: [] } }),
      "Invalid type for 'variables': expected an object, but got an array instead.",
      'variables',
      'invalid_type',
    );
    expect(await t.request('POST', '/v1/prompts', { body: { ...base(), is_raw_template: 1 } })).toMatchObject(
      errorResponse(400, 'Unrecognized request argument supplied: is_raw_template', 'is_raw_template', 'unknown_parameter'),
    );
    expect(await t.request('PUT', '/v1/prompts/support-reply', { body: {} })).toMatchObject(errorResponse(400, 'Send at least one field to change.', null, 'missing_required_parameter'));
    expect(await t.request('PUT', '/v1/prompts/support-reply/versions/not-a-uuid', { body: { label_id: 'nope' } })).toMatchObject(
      errorResponse(400, "Invalid value for 'label_id': expected a UUID.", 'label_id', 'invalid_value'),
    );
  });

  it('unknown prompts and versions: 404', async () => {
    expect(await t.request('GET', '/v1/prompts/no-such')).toMatchObject(errorResponse(404, 'Prompt not found.', 'promptId', 'prompt_not_found'));
    expect(await t.request('GET', '/v1/prompts/support-reply/versions/4f0c6a0e-1b7e-4d43-9d38-2d3c3b6f1a10')).toMatchObject(
      errorResponse(404, 'Prompt version not found.', 'versionId', 'prompt_not_found'),
    );
    expect(await t.request('POST', '/v1/prompts/no-such/completions', { body: { variables: {} } })).toMatchObject(
      errorResponse(404, 'Prompt not found.', 'promptId', 'prompt_not_found'),
    );
  });
});

describe('tenancy', () => {
  it('a workspace key sees only its workspace’s prompts; another organisation sees none', async () => {
    const ws = await createWorkspaceWithKey(t, 'Prompt team');
    const mine = await ok('POST', '/v1/prompts', { name: 'Team prompt', collection_id: 'default', string: 'Team {{x}}', model: 'local' }, ws.key);
    const theirs = (await ok('GET', '/v1/prompts/support-reply')).id;

    expect((await ok('GET', '/v1/prompts', undefined, ws.key)).data.map((p: any) => p.id)).toEqual([mine.id]);
    const hidden = errorResponse(404, 'Prompt not found.', 'promptId', 'prompt_not_found');
    for (const [method, path, body] of [
      ['GET', `/v1/prompts/${theirs}`],
      ['PUT', `/v1/prompts/${theirs}`, { name: 'Mine now' }],
      ['DELETE', `/v1/prompts/${theirs}`],
      ['GET', `/v1/prompts/${theirs}/versions`],
      ['POST', `/v1/prompts/${theirs}/render`, { variables: {} }],
      ['POST', `/v1/prompts/${theirs}/completions`, { variables: {} }],
    ] as const) {
      expect(await t.request(method, path, { body, key: ws.key }), `${method} ${path}`).toMatchObject(hidden);
    }
    // The workspace's default collection is its own: the organisation's `support` is not visible.
    expect(await t.request('POST', '/v1/prompts', { body: { name: 'x', collection_id: 'support', string: 'x', model: 'local' }, key: ws.key })).toMatchObject(
      errorResponse(404, 'Collection not found.', 'collection_id', 'collection_not_found'),
    );

    const other = await createOtherOrganisation(t);
    expect((await ok('GET', '/v1/prompts', undefined, other.key)).data).toEqual([]);
    expect(await t.request('GET', `/v1/prompts/${mine.id}`, { key: other.key })).toMatchObject(hidden);
    // The organisation key reaches the workspace's prompt through workspace_id.
    expect((await ok('GET', `/v1/prompts?workspace_id=${ws.slug}`)).data.map((p: any) => p.id)).toEqual([mine.id]);
  });
});
