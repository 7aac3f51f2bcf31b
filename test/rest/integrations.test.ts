import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp, type TestResponse } from '../helpers/app.js';
import { error } from '../helpers/errors.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';

// Contract tests of /v1/integrations: status, content type and the whole body.

const T0 = '2026-11-22T10:00:00.000Z';
const SECRET = 'sk-live-THIS-IS-THE-SECRET-9f3k';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
let clock: ManualClock;
let organisationId: string;
const seen: string[] = [];

/** Every response of this file, so one test can check the secret never came back. */
async function call(method: string, path: string, init?: Parameters<TestApp['request']>[2]): Promise<TestResponse> {
  const response = await t.request(method, path, init);
  seen.push(response.text);
  return response;
}

function expectJson(r: TestResponse, status: number, body: unknown): void {
  expect({ status: r.status, body: r.body }).toEqual({ status, body });
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
}

/** A list item: Portkey's IntegrationList. */
const localSummary = () => ({
  id: expect.stringMatching(UUID),
  slug: 'local',
  name: 'Local model',
  description: 'The built-in deterministic model: no provider account, no network.',
  ai_provider_id: 'local',
  status: 'active',
  organisation_id: organisationId,
  object: 'integration',
  created_at: T0,
  last_updated_at: T0,
});

/** One integration: Portkey's IntegrationDetailResponse (no key: no masked_key; nothing configured: {}). */
const localIntegration = () => ({
  ...localSummary(),
  configurations: {},
  allow_all_models: true,
  global_workspace_access_settings: { enabled: true, usage_limits: null, rate_limits: null },
});

beforeAll(async () => {
  clock = new ManualClock(new Date(T0));
  t = await createTestApp({}, { clock });
  organisationId = t.app.bootstrapResult.organisationId!;
});
afterAll(() => t.close());

describe('out of the box', () => {
  it('lists the built-in local integration, enabled for all workspaces', async () => {
    expectJson(await call('GET', '/v1/integrations'), 200, { object: 'list', total: 1, data: [localSummary()] });
    expectJson(await call('GET', '/v1/integrations/local'), 200, localIntegration());
  });
});

describe('POST /v1/integrations', () => {
  let openaiId: string;

  it('creates an integration and answers {id, slug}', async () => {
    clock.set('2026-11-22T10:01:00.000Z');
    const r = await call('POST', '/v1/integrations', {
      body: {
        name: 'OpenAI production',
        slug: 'openai-prod',
        description: 'Team account',
        ai_provider_id: 'openai',
        key: SECRET,
        configurations: {
          base_url: 'https://api.openai.example/v1/',
          openai_organization: 'org-team',
          default_model: 'gpt-4o-mini',
          prices: { 'gpt-4o-mini': { input: 0.2, output: 0.8 } },
        },
        unknown_key: 'ignored',
      },
    });
    expectJson(r, 200, { id: expect.stringMatching(UUID), slug: 'openai-prod' });
    openaiId = r.body.id;
  });

  it('returns it with the key masked, by slug or id', async () => {
    const expected = {
      id: openaiId,
      slug: 'openai-prod',
      name: 'OpenAI production',
      description: 'Team account',
      ai_provider_id: 'openai',
      status: 'active',
      organisation_id: organisationId,
      object: 'integration',
      masked_key: '************9f3k',
      configurations: { custom_host: 'https://api.openai.example/v1', openai_organization: 'org-team', default_model: 'gpt-4o-mini' },
      allow_all_models: true,
      created_at: '2026-11-22T10:01:00.000Z',
      last_updated_at: '2026-11-22T10:01:00.000Z',
    };
    expectJson(await call('GET', '/v1/integrations/openai-prod'), 200, expected);
    expectJson(await call('GET', `/v1/integrations/${openaiId}`), 200, expected);
    // Its prices are its models' pricing_config (US cents per token): 0.2 dollars per million is 0.00002.
    const models = await call('GET', '/v1/integrations/openai-prod/models');
    expect(models.body.models.find((m: { slug: string }) => m.slug === 'gpt-4o-mini').pricing_config).toEqual({
      type: 'static',
      pay_as_you_go: { request_token: { price: 0.00002 }, response_token: { price: 0.00008 } },
    });
  });

  it('answers a description as a string, "" when none was given', async () => {
    await call('POST', '/v1/integrations', { body: { name: 'Bare', slug: 'bare', ai_provider_id: 'local' } });
    expect((await call('GET', '/v1/integrations/bare')).body.description).toBe('');
    expect((await call('GET', '/v1/integrations')).body.data.find((i: { slug: string }) => i.slug === 'bare').description).toBe('');
    const gql = await t.graphql(`{ integration(slug: "bare") { description } }`);
    expect(gql.body).toEqual({ data: { integration: { description: null } } });
    await call('DELETE', '/v1/integrations/bare');
  });

  it('lists newest first, with pages and filters', async () => {
    const list = await call('GET', '/v1/integrations');
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    expect(list.body.data.map((i: { slug: string }) => i.slug)).toEqual(['openai-prod', 'local']);
    const second = await call('GET', '/v1/integrations?page_size=1&current_page=1');
    expect({ total: second.body.total, slugs: second.body.data.map((i: { slug: string }) => i.slug) }).toEqual({ total: 2, slugs: ['local'] });
    expectJson(await call('GET', '/v1/integrations?page_size=0'), 200, { object: 'list', total: 2, data: [] });
    expectJson(await call('GET', '/v1/integrations?type=workspace'), 200, { object: 'list', total: 0, data: [] });
    // Only integrations the workspace has enabled access to (openai-prod has none yet).
    const forDefault = await call('GET', '/v1/integrations?workspace_id=default&type=organisation');
    expect(forDefault.body.data.map((i: { slug: string }) => i.slug)).toEqual(['local']);
  });

  it('derives a unique slug from the name when none is sent', async () => {
    const a = await call('POST', '/v1/integrations', { body: { name: 'Ollama on GPU box', ai_provider_id: 'openai' } });
    const b = await call('POST', '/v1/integrations', { body: { name: 'Ollama on GPU box', ai_provider_id: 'openai' } });
    expectJson(a, 200, { id: expect.stringMatching(UUID), slug: 'ollama-on-gpu-box' });
    expectJson(b, 200, { id: expect.stringMatching(UUID), slug: 'ollama-on-gpu-box-2' });
  });

  it('refuses a taken slug with 409 conflict', async () => {
    expectJson(
      await call('POST', '/v1/integrations', { body: { name: 'Again', slug: 'openai-prod', ai_provider_id: 'openai' } }),
      409,
      error("An integration with slug 'openai-prod' already exists.", 'slug', 'conflict'),
    );
  });

  it.each([
    [{ ai_provider_id: 'openai' }, error("Missing required parameter: 'name'.", 'name', 'missing_required_parameter')],
    [{ name: 'x' }, error("Missing required parameter: 'ai_provider_id'.", 'ai_provider_id', 'missing_required_parameter')],
    [{ name: 7, ai_provider_id: 'openai' }, error("Invalid type for 'name': expected a string, but got an integer instead.", 'name', 'invalid_type')],
    [{ name: 'x', ai_provider_id: 'anthropic' }, error("Invalid value for 'ai_provider_id': expected one of 'local', 'openai'.", 'ai_provider_id', 'invalid_value')],
    [{ name: ' ', ai_provider_id: 'openai' }, error("'name' must be a non-empty string.", 'name', null)],
    [{ name: 'x', slug: 'has space', ai_provider_id: 'openai' }, error("'slug' must be 1–64 letters, digits, '-' or '_' (and not a UUID).", 'slug', 'invalid_value')],
    [
      { name: 'x', slug: '123e4567-e89b-42d3-a456-426614174000', ai_provider_id: 'openai' },
      error("'slug' must be 1–64 letters, digits, '-' or '_' (and not a UUID).", 'slug', 'invalid_value'),
    ],
    [{ name: 'x', ai_provider_id: 'openai', key: '' }, error("'key' must be a non-empty string of at most 8192 characters.", 'key', 'invalid_value')],
    [{ name: 'x', ai_provider_id: 'openai', key: 42 }, error("Invalid type for 'key': expected a string, but got an integer instead.", 'key', 'invalid_type')],
    [
      { name: 'x', ai_provider_id: 'openai', configurations: 'fast' },
      error("Invalid type for 'configurations': expected an object, but got a string instead.", 'configurations', 'invalid_type'),
    ],
    [
      { name: 'x', ai_provider_id: 'openai', configurations: { base_url: 'localhost:11434' } },
      error("Invalid value for 'configurations.base_url': expected an http:// or https:// URL.", 'configurations.base_url', 'invalid_value'),
    ],
    [
      { name: 'x', ai_provider_id: 'openai', configurations: { prices: { 'gpt-x': { input: '1', output: 2 } } } },
      error("Invalid type for 'configurations.prices.gpt-x.input': expected a number, but got a string instead.", 'configurations.prices.gpt-x.input', 'invalid_type'),
    ],
    [
      { name: 'x', ai_provider_id: 'openai', workspace_id: 'default' },
      error(
        "Integrations belong to the organisation: leave out 'workspace_id' and grant workspaces access with PUT /v1/integrations/{slug}/workspaces.",
        'workspace_id',
        'invalid_value',
      ),
    ],
  ])('refuses %j', async (body, expected) => {
    const before = (await call('GET', '/v1/integrations?page_size=0')).body.total;
    expectJson(await call('POST', '/v1/integrations', { body }), 400, expected);
    expect((await call('GET', '/v1/integrations?page_size=0')).body.total).toBe(before);
  });

  it('accepts camelCase keys inside configurations (the portkey-ai SDK only converts top-level keys)', async () => {
    const r = await call('POST', '/v1/integrations', { body: { name: 'Camel', ai_provider_id: 'openai', configurations: { baseUrl: 'http://127.0.0.1:9/v1', defaultModel: 'm' } } });
    expect(r.status).toBe(200);
    const got = await call('GET', '/v1/integrations/camel');
    expect(got.body.configurations).toEqual({ custom_host: 'http://127.0.0.1:9/v1', default_model: 'm' });
  });

  it('answers 404 for an unknown slug', async () => {
    expectJson(await call('GET', '/v1/integrations/nope'), 404, error("No integration found with slug 'nope'.", null, 'integration_not_found'));
  });
});

describe('PUT /v1/integrations/{slug}', () => {
  it('changes what is sent and answers {}', async () => {
    clock.set('2026-11-22T10:05:00.000Z');
    expectJson(
      await call('PUT', '/v1/integrations/openai-prod', { body: { name: 'OpenAI (prod)', configurations: { default_model: 'gpt-4o' } } }),
      200,
      {},
    );
    const got = await call('GET', '/v1/integrations/openai-prod');
    expect(got.body).toMatchObject({
      name: 'OpenAI (prod)',
      description: 'Team account',
      masked_key: '************9f3k',
      configurations: { custom_host: 'https://api.openai.example/v1', openai_organization: 'org-team', default_model: 'gpt-4o' },
      created_at: '2026-11-22T10:01:00.000Z',
      last_updated_at: '2026-11-22T10:05:00.000Z',
    });
  });

  it('replaces and removes the key', async () => {
    expectJson(await call('PUT', '/v1/integrations/camel', { body: { key: 'abcd-new-key-WXYZ' } }), 200, {});
    expect((await call('GET', '/v1/integrations/camel')).body.masked_key).toBe('************WXYZ');
    expectJson(await call('PUT', '/v1/integrations/camel', { body: { key: null } }), 200, {});
    expect((await call('GET', '/v1/integrations/camel')).body).not.toHaveProperty('masked_key');
  });

  it.each([
    [{ name: '' }, error("'name' must be a non-empty string.", 'name', null)],
    [{ configurations: { base_url: 'mailto:x@y' } }, error("Invalid value for 'configurations.base_url': expected an http:// or https:// URL.", 'configurations.base_url', 'invalid_value')],
    [{ description: ['x'] }, error("Invalid type for 'description': expected a string, but got an array instead.", 'description', 'invalid_type')],
  ])('refuses %j and changes nothing', async (body, expected) => {
    const before = (await call('GET', '/v1/integrations/openai-prod')).body;
    expectJson(await call('PUT', '/v1/integrations/openai-prod', { body }), 400, expected);
    expect((await call('GET', '/v1/integrations/openai-prod')).body).toEqual(before);
  });

  it('answers 404 for an unknown slug', async () => {
    expectJson(await call('PUT', '/v1/integrations/nope', { body: { name: 'x' } }), 404, error("No integration found with slug 'nope'.", null, 'integration_not_found'));
  });
});

describe('DELETE /v1/integrations/{slug}', () => {
  it('archives it: {} (a JSON body is tolerated), then 404, gone from lists, slug free again', async () => {
    const created = await call('POST', '/v1/integrations', { body: { name: 'Temp', slug: 'temp', ai_provider_id: 'local' } });
    expectJson(await call('PUT', '/v1/integrations/temp/workspaces', { body: { global_workspace_access: { enabled: true } } }), 200, {});
    expect((await call('GET', '/v1/providers/temp')).status).toBe(200);
    expectJson(await call('DELETE', '/v1/integrations/temp', { body: {} }), 200, {});
    expectJson(await call('GET', '/v1/integrations/temp'), 404, error("No integration found with slug 'temp'.", null, 'integration_not_found'));
    expectJson(await call('DELETE', '/v1/integrations/temp'), 404, error("No integration found with slug 'temp'.", null, 'integration_not_found'));
    expectJson(await call('GET', `/v1/integrations/${created.body.id}`), 404, error(`No integration found with slug '${created.body.id}'.`, null, 'integration_not_found'));
    // Its providers (virtual keys) went with it.
    expectJson(await call('GET', '/v1/providers/temp'), 404, error("No provider found with slug 'temp'.", null, 'provider_not_found'));
    const again = await call('POST', '/v1/integrations', { body: { name: 'Temp', slug: 'temp', ai_provider_id: 'local' } });
    expectJson(again, 200, { id: expect.stringMatching(UUID), slug: 'temp' });
    expect(again.body.id).not.toBe(created.body.id);
  });
});

describe('who may do what', () => {
  it('workspace keys read integrations but cannot change organisation-level settings (403)', async () => {
    const { key } = await createWorkspaceWithKey(t, 'Team read-only');
    expect((await call('GET', '/v1/integrations/openai-prod', { key })).status).toBe(200);
    const denied = error('This operation needs an organisation API key.', null, 'permission_denied', 'permission_error');
    expectJson(await call('POST', '/v1/integrations', { key, body: { name: 'x', ai_provider_id: 'openai' } }), 403, denied);
    expectJson(await call('PUT', '/v1/integrations/openai-prod', { key, body: { name: 'x' } }), 403, denied);
    expectJson(await call('DELETE', '/v1/integrations/openai-prod', { key }), 403, denied);
    expectJson(await call('PUT', '/v1/integrations/openai-prod/workspaces', { key, body: {} }), 403, denied);
  });

  it("another organisation's integrations do not exist for the caller", async () => {
    const other = await createOtherOrganisation(t);
    expectJson(await call('GET', '/v1/integrations/openai-prod', { key: other.key }), 404, error("No integration found with slug 'openai-prod'.", null, 'integration_not_found'));
    expectJson(await call('GET', '/v1/integrations', { key: other.key }), 200, { object: 'list', total: 0, data: [] });
  });

  it('needs an API key', async () => {
    expectJson(
      await call('GET', '/v1/integrations', { key: null }),
      401,
      error('Missing API key: send it in the x-gateway-api-key header.', null, 'invalid_api_key', 'authentication_error'),
    );
  });
});

describe('query parameters', () => {
  it.each([
    ['page_size=1001', error("Invalid value for 'page_size': expected an integer from 0 to 1000.", 'page_size', 'invalid_value')],
    ['page_size=-1', error("Invalid value for 'page_size': expected an integer from 0 to 1000.", 'page_size', 'invalid_value')],
    ['current_page=x', error("Invalid type for 'current_page': expected an integer, but got 'x' instead.", 'current_page', 'invalid_type')],
    ['type=team', error("Invalid value for query parameter 'type': expected one of 'all', 'organisation', 'workspace'.", 'type', 'invalid_value')],
    ['workspace_id=nowhere', error("Workspace not found: 'nowhere'.", 'workspace_id', 'workspace_not_found')],
  ])('GET /v1/integrations?%s', async (query, expected) => {
    const r = await call('GET', `/v1/integrations?${query}`);
    expectJson(r, query.startsWith('workspace_id') ? 404 : 400, expected);
  });

  it('GraphQL refuses an unknown type with the same contract (an argument: no "query parameter")', async () => {
    const r = await t.graphql(`{ integrations(type: "team") { total } }`);
    expect(r.errors?.[0]).toMatchObject({
      message: "Invalid value for 'type': expected one of 'all', 'organisation', 'workspace'.",
      extensions: { status: 400, param: 'type', code: 'invalid_value' },
    });
  });
});

describe('GraphQL mirrors REST', () => {
  it('creates, reads, updates and deletes', async () => {
    clock.set('2026-11-22T12:00:00.000Z');
    const created = await t.graphql(
      `mutation($input: CreateIntegrationInput!) { createIntegration(input: $input) { slug aiProviderId maskedKey configurations { baseUrl } globalWorkspaceAccess { enabled } } }`,
      { input: { name: 'GQL', slug: 'gql', aiProviderId: 'openai', key: SECRET, configurations: { baseUrl: 'http://127.0.0.1:1/v1' } } },
    );
    seen.push(JSON.stringify(created.body));
    expect(created.body).toEqual({
      data: { createIntegration: { slug: 'gql', aiProviderId: 'openai', maskedKey: '************9f3k', configurations: { baseUrl: 'http://127.0.0.1:1/v1' }, globalWorkspaceAccess: null } },
    });
    const updated = await t.graphql(`mutation { updateIntegration(slug: "gql", input: { name: "GQL 2", key: null }) { name maskedKey } }`);
    expect(updated.body).toEqual({ data: { updateIntegration: { name: 'GQL 2', maskedKey: null } } });
    const read = await t.graphql(`{ integration(slug: "gql") { name workspaces { total workspaces { enabled inheritsGlobal } } } integrations(pageSize: 1) { total data { slug } } }`);
    expect(read.body.data.integration).toEqual({ name: 'GQL 2', workspaces: { total: 2, workspaces: [{ enabled: false, inheritsGlobal: true }, { enabled: false, inheritsGlobal: true }] } });
    expect(read.body.data.integrations.data).toEqual([{ slug: 'gql' }]);
    const deleted = await t.graphql(`mutation { deleteIntegration(slug: "gql") { slug status } }`);
    expect(deleted.body).toEqual({ data: { deleteIntegration: { slug: 'gql', status: 'archived' } } });
    const gone = await t.graphql(`{ integration(slug: "gql") { id } }`);
    expect(gone.errors?.[0]).toMatchObject({ message: "No integration found with slug 'gql'.", extensions: { status: 404, code: 'integration_not_found' } });
  });
});

it('no response of this file ever contained the secret key', () => {
  expect(seen.length).toBeGreaterThan(40);
  for (const text of seen) expect(text).not.toContain(SECRET);
  // The test can fail: the mask is there, the secret is not.
  expect(seen.some((text) => text.includes('************9f3k'))).toBe(true);
});
