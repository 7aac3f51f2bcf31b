import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { configCache } from '../../src/lib/config-cache.js';
import { IntegrationSchema } from '../../src/modules/integrations/integration.entity.js';
import { resolveProvider } from '../../src/modules/integrations/provider-resolution.js';
import { createTestApp, type TestApp, type TestResponse } from '../helpers/app.js';
import { error } from '../helpers/errors.js';
import { createWorkspaceWithKey } from '../helpers/tenants.js';

// Providers (virtual keys): /v1/providers contract, the `local` key out of the box, and
// resolveProvider as the data plane uses it.

const T0 = '2026-11-22T10:00:00.000Z';
const SECRET = 'sk-provider-secret-abcdef-7777';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
let clock: ManualClock;
let defaultId: string;
let localIntegrationId: string;
let openaiId: string;
let team: { workspaceId: string; slug: string; key: string };

function expectJson(r: TestResponse, status: number, body: unknown): void {
  expect({ status: r.status, body: r.body }).toEqual({ status, body });
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
}

const resolve = (workspaceId: string, virtualKey: string) => resolveProvider(t.app.runtime.fork(), t.app.runtime, workspaceId, virtualKey);

beforeAll(async () => {
  clock = new ManualClock(new Date(T0));
  t = await createTestApp({}, { clock });
  defaultId = (await t.request('GET', '/v1/admin/workspaces/default')).body.id;
  localIntegrationId = (await t.request('GET', '/v1/integrations/local')).body.id;
});
afterAll(() => t.close());

describe('the local virtual key, with no setup', () => {
  const localProvider = () => ({
    id: expect.stringMatching(UUID),
    slug: 'local',
    name: 'Local model',
    note: null,
    status: 'active',
    workspace_id: defaultId,
    integration_id: localIntegrationId,
    input_guardrails: [],
    output_guardrails: [],
    created_at: T0,
    object: 'provider',
  });

  it('is listed and readable', async () => {
    expectJson(await t.request('GET', '/v1/providers'), 200, { object: 'list', total: 1, data: [localProvider()] });
    expectJson(await t.request('GET', '/v1/providers/local'), 200, localProvider());
    expectJson(await t.request('GET', '/v1/providers/local?workspace_id=default'), 200, localProvider());
  });

  it('resolves for the default workspace', async () => {
    const resolved = await resolve(defaultId, 'local');
    expect(resolved).toEqual({
      provider: { id: expect.stringMatching(UUID), slug: 'local', workspaceId: defaultId, inputGuardrails: [], outputGuardrails: [] },
      integration: { id: localIntegrationId, slug: 'local', aiProviderId: 'local', baseUrl: null, defaultModel: null, prices: null, openaiOrganization: null, models: null },
      access: { id: expect.stringMatching(UUID), enabled: true, usageLimit: null, rateLimit: null },
    });
    expect(resolved.integration.apiKey).toBeNull();
  });

  it('exists in workspaces created later too', async () => {
    clock.set('2026-11-22T10:30:00.000Z');
    team = await createWorkspaceWithKey(t, 'Team');
    expect((await resolve(team.workspaceId, 'local')).provider.workspaceId).toBe(team.workspaceId);
  });
});

describe('resolveProvider', () => {
  beforeAll(async () => {
    clock.set('2026-11-22T10:45:00.000Z');
    const created = await t.request('POST', '/v1/integrations', {
      body: { name: 'OpenAI', slug: 'openai', ai_provider_id: 'openai', key: SECRET, configurations: { base_url: 'http://127.0.0.1:9/v1', default_model: 'gpt-4o-mini', prices: { 'my-model': { input: 1, output: 2 } } } },
    });
    openaiId = created.body.id;
    await t.request('PUT', '/v1/integrations/openai/workspaces', {
      body: { workspaces: [{ id: 'default', enabled: true, usage_limits: [{ credit_limit: 5, periodic_reset: 'weekly' }], rate_limits: [{ unit: 'rpm', value: 60 }] }] },
    });
  });

  it('gives the integration (key decrypted) and the access with its limits', async () => {
    const resolved = await resolve(defaultId, 'openai');
    expect(resolved).toEqual({
      provider: { id: expect.stringMatching(UUID), slug: 'openai', workspaceId: defaultId, inputGuardrails: [], outputGuardrails: [] },
      integration: { id: openaiId, slug: 'openai', aiProviderId: 'openai', baseUrl: 'http://127.0.0.1:9/v1', defaultModel: 'gpt-4o-mini', prices: { 'my-model': { input: 1, output: 2 } }, openaiOrganization: null, models: null },
      access: {
        id: expect.stringMatching(UUID),
        enabled: true,
        usageLimit: { type: 'cost', creditLimit: 5, alertThreshold: null, periodicReset: 'weekly' },
        rateLimit: { type: 'requests', unit: 'rpm', value: 60 },
      },
    });
    expect(resolved.integration.apiKey).toBe(SECRET);
    // Serialising or spreading the result (e.g. into a log line) leaves the key out.
    expect(JSON.stringify(resolved)).not.toContain(SECRET);
    expect(JSON.stringify({ ...resolved.integration })).not.toContain(SECRET);
  });

  it('unknown virtual key: 404 virtual_key_not_found naming it', async () => {
    await expect(resolve(defaultId, 'nope')).rejects.toMatchObject({
      status: 404,
      type: 'invalid_request_error',
      code: 'virtual_key_not_found',
      param: null,
      message: "No provider found for virtual key 'nope' in this workspace.",
    });
    // A provider of another workspace is unknown here.
    await expect(resolve(team.workspaceId, 'openai')).rejects.toMatchObject({ status: 404, code: 'virtual_key_not_found' });
  });

  it('disabled access: 403 integration_disabled', async () => {
    await t.request('PUT', '/v1/integrations/openai/workspaces', { body: { workspaces: [{ id: 'default', enabled: false }] } });
    await expect(resolve(defaultId, 'openai')).rejects.toMatchObject({
      status: 403,
      type: 'permission_error',
      code: 'integration_disabled',
      message: "Integration 'openai' (virtual key 'openai') is disabled for this workspace.",
    });
    await t.request('PUT', '/v1/integrations/openai/workspaces', { body: { workspaces: [{ id: 'default', enabled: true }] } });
    expect((await resolve(defaultId, 'openai')).access.enabled).toBe(true);
  });

  it('archived integration behind a live provider: 403 integration_disabled', async () => {
    // Written behind the services' back, so told to the cache as they would.
    await t.app.runtime.fork().nativeUpdate(IntegrationSchema, { id: openaiId }, { status: 'archived' });
    configCache(t.app.runtime).invalidate('providers');
    try {
      await expect(resolve(defaultId, 'openai')).rejects.toMatchObject({
        status: 403,
        code: 'integration_disabled',
        message: "The integration behind virtual key 'openai' has been deleted.",
      });
    } finally {
      await t.app.runtime.fork().nativeUpdate(IntegrationSchema, { id: openaiId }, { status: 'active' });
      configCache(t.app.runtime).invalidate('providers');
    }
  });
});

describe('POST /v1/providers', () => {
  it('creates another virtual key with guardrails', async () => {
    clock.set('2026-11-22T11:00:00.000Z');
    const r = await t.request('POST', '/v1/providers', {
      body: { integration_id: 'openai', slug: 'openai-strict', name: 'Strict', note: 'with guardrails', input_guardrails: ['guard_a', 'guard_a', 'b'], output_guardrails: ['c'] },
    });
    expectJson(r, 200, { id: expect.stringMatching(UUID), slug: 'openai-strict' });
    expectJson(await t.request('GET', '/v1/providers/openai-strict'), 200, {
      id: r.body.id,
      slug: 'openai-strict',
      name: 'Strict',
      note: 'with guardrails',
      status: 'active',
      workspace_id: defaultId,
      integration_id: openaiId,
      input_guardrails: ['guard_a', 'b'],
      output_guardrails: ['c'],
      created_at: '2026-11-22T11:00:00.000Z',
      object: 'provider',
    });
    // integration_id is the integration's address too.
    expect((await t.request('GET', `/v1/integrations/${openaiId}`)).body).toMatchObject({ slug: 'openai', ai_provider_id: 'openai' });
    const resolved = await resolve(defaultId, 'openai-strict');
    expect(resolved.provider).toEqual({ id: r.body.id, slug: 'openai-strict', workspaceId: defaultId, inputGuardrails: ['guard_a', 'b'], outputGuardrails: ['c'] });
    // Same access (and so the same limits and counters) as the workspace's first provider.
    expect(resolved.access.id).toBe((await resolve(defaultId, 'openai')).access.id);
  });

  it('numbers the default slug when the integration slug is taken, and takes the integration id too', async () => {
    clock.set('2026-11-22T11:10:00.000Z');
    expectJson(await t.request('POST', '/v1/providers', { body: { integration_id: openaiId } }), 200, { id: expect.stringMatching(UUID), slug: 'openai-2' });
  });

  it.each([
    [{}, 400, error("Missing required parameter: 'integration_id'.", 'integration_id', 'missing_required_parameter')],
    [{ integration_id: 'nope' }, 404, error("No integration found with slug 'nope'.", 'integration_id', 'integration_not_found')],
    [{ integration_id: 'openai', slug: 'openai' }, 409, error("A provider with slug 'openai' already exists in this workspace.", 'slug', 'conflict')],
    [{ integration_id: 'openai', slug: 'a b' }, 400, error("'slug' must be 1–64 letters, digits, '-' or '_' (and not a UUID).", 'slug', 'invalid_value')],
    [{ integration_id: 'openai', input_guardrails: 'g' }, 400, error("Invalid type for 'input_guardrails': expected an array, but got a string instead.", 'input_guardrails', 'invalid_type')],
    [{ integration_id: 'openai', output_guardrails: [''] }, 400, error("'output_guardrails[0]' must be a guardrail id or slug (1–255 characters).", 'output_guardrails[0]', 'invalid_value')],
    [
      { integration_id: 'openai', rate_limits: [{ unit: 'rpm', value: 1 }] },
      400,
      error("Invalid value for 'rate_limits': limits are set per workspace access: use PUT /v1/integrations/{slug}/workspaces.", 'rate_limits', 'invalid_value'),
    ],
    [{ integration_id: 'openai', workspace_id: 'nowhere' }, 404, error("Workspace not found: 'nowhere'.", 'workspace_id', 'workspace_not_found')],
  ])('refuses %j', async (body, status, expected) => {
    const before = (await t.request('GET', '/v1/providers?page_size=0')).body.total;
    expectJson(await t.request('POST', '/v1/providers', { body }), status, expected);
    expect((await t.request('GET', '/v1/providers?page_size=0')).body.total).toBe(before);
  });

  it('refuses an integration the workspace has no access to (403 integration_disabled)', async () => {
    expectJson(
      await t.request('POST', '/v1/providers', { body: { integration_id: 'openai', workspace_id: team.slug } }),
      403,
      error(
        "Integration 'openai' is not enabled for workspace 'team': grant access with PUT /v1/integrations/openai/workspaces first.",
        null,
        'integration_disabled',
        'permission_error',
      ),
    );
  });
});

describe('GET /v1/providers', () => {
  it('lists newest first, per workspace or across the ones the caller sees', async () => {
    const all = await t.request('GET', '/v1/providers');
    expect(all.body.total).toBe(5);
    expect(all.body.data.map((p: { slug: string; workspace_id: string }) => `${p.slug}@${p.workspace_id === defaultId ? 'default' : 'team'}`)).toEqual([
      'openai-2@default',
      'openai-strict@default',
      'openai@default',
      'local@team',
      'local@default',
    ]);
    const page = await t.request('GET', '/v1/providers?workspace_id=default&page_size=2&current_page=1');
    expect({ total: page.body.total, slugs: page.body.data.map((p: { slug: string }) => p.slug) }).toEqual({ total: 4, slugs: ['openai', 'local'] });
    expectJson(await t.request('GET', '/v1/providers?page_size=1001'), 400, error("Invalid value for 'page_size': expected an integer from 0 to 1000.", 'page_size', 'invalid_value'));
  });

  it('404 for an unknown slug', async () => {
    expectJson(await t.request('GET', '/v1/providers/nope'), 404, error("No provider found with slug 'nope'.", null, 'provider_not_found'));
  });
});

describe('PUT /v1/providers/{slug}', () => {
  it('changes name, note and guardrails; answers {id, slug}', async () => {
    clock.set('2026-11-22T12:00:00.000Z');
    const r = await t.request('PUT', '/v1/providers/openai-strict', { body: { name: 'Stricter', note: null, input_guardrails: null, output_guardrails: ['c', 'd'] } });
    expectJson(r, 200, { id: expect.stringMatching(UUID), slug: 'openai-strict' });
    const got = (await t.request('GET', '/v1/providers/openai-strict')).body;
    expect(got).toMatchObject({ name: 'Stricter', note: null, input_guardrails: [], output_guardrails: ['c', 'd'], created_at: '2026-11-22T11:00:00.000Z' });
    // The wire has no update time (the document's Providers has none); the update recorded it.
    expect((await t.graphql('{ provider(slug: "openai-strict") { updatedAt } }')).data).toEqual({ provider: { updatedAt: '2026-11-22T12:00:00.000Z' } });
  });

  it.each([
    [{ name: '' }, 400, error("'name' must be a non-empty string.", 'name', null)],
    [{ output_guardrails: [1] }, 400, error("Invalid type for 'output_guardrails[0]': expected a string, but got an integer instead.", 'output_guardrails[0]', 'invalid_type')],
    [
      { usage_limits: [{ credit_limit: 1 }] },
      400,
      error("Invalid value for 'usage_limits': limits are set per workspace access: use PUT /v1/integrations/{slug}/workspaces.", 'usage_limits', 'invalid_value'),
    ],
  ])('refuses %j', async (body, status, expected) => {
    const before = (await t.request('GET', '/v1/providers/openai-strict')).body;
    expectJson(await t.request('PUT', '/v1/providers/openai-strict', { body }), status, expected);
    expect((await t.request('GET', '/v1/providers/openai-strict')).body).toEqual(before);
  });

  it('404 for an unknown slug', async () => {
    expectJson(await t.request('PUT', '/v1/providers/nope', { body: { name: 'x' } }), 404, error("No provider found with slug 'nope'.", null, 'provider_not_found'));
  });
});

describe('DELETE /v1/providers/{slug}', () => {
  it('archives it: {}, then 404 and its virtual key stops resolving; the slug is free again', async () => {
    expectJson(await t.request('DELETE', '/v1/providers/openai-2', { body: {} }), 200, {});
    expectJson(await t.request('GET', '/v1/providers/openai-2'), 404, error("No provider found with slug 'openai-2'.", null, 'provider_not_found'));
    expectJson(await t.request('DELETE', '/v1/providers/openai-2'), 404, error("No provider found with slug 'openai-2'.", null, 'provider_not_found'));
    await expect(resolve(defaultId, 'openai-2')).rejects.toMatchObject({ status: 404, code: 'virtual_key_not_found' });
    expectJson(await t.request('POST', '/v1/providers', { body: { integration_id: 'openai', slug: 'openai-2' } }), 200, { id: expect.stringMatching(UUID), slug: 'openai-2' });
  });
});

describe('workspace keys', () => {
  it('manage providers of their own workspace only', async () => {
    const key = team.key;
    const own = await t.request('GET', '/v1/providers', { key });
    expect(own.body.data.map((p: { slug: string; workspace_id: string }) => [p.slug, p.workspace_id])).toEqual([['local', team.workspaceId]]);
    expectJson(await t.request('GET', '/v1/providers/openai?workspace_id=default', { key }), 404, error("Workspace not found: 'default'.", 'workspace_id', 'workspace_not_found'));
    const created = await t.request('POST', '/v1/providers', { key, body: { integration_id: 'local', slug: 'local-b', input_guardrails: ['g1'] } });
    expectJson(created, 200, { id: expect.stringMatching(UUID), slug: 'local-b' });
    expect((await resolve(team.workspaceId, 'local-b')).provider.inputGuardrails).toEqual(['g1']);
    expectJson(await t.request('DELETE', '/v1/providers/local-b', { key }), 200, {});
  });
});

describe('GraphQL mirrors REST', () => {
  it('provider, providers, createProvider, updateProvider, deleteProvider', async () => {
    clock.set('2026-11-22T13:00:00.000Z');
    const created = await t.graphql(
      `mutation { createProvider(input: { integrationId: "local", slug: "gql", outputGuardrails: ["x"] }) { slug workspaceId outputGuardrails integration { slug } } }`,
    );
    expect(created.body).toEqual({ data: { createProvider: { slug: 'gql', workspaceId: defaultId, outputGuardrails: ['x'], integration: { slug: 'local' } } } });
    const updated = await t.graphql(`mutation { updateProvider(slug: "gql", input: { note: "n", outputGuardrails: null }) { note outputGuardrails } }`);
    expect(updated.body).toEqual({ data: { updateProvider: { note: 'n', outputGuardrails: [] } } });
    const read = await t.graphql(`{ provider(slug: "gql", workspaceId: "default") { status } providers(workspaceId: "default", pageSize: 1) { total data { slug } } }`);
    expect(read.body).toEqual({ data: { provider: { status: 'active' }, providers: { total: 5, data: [{ slug: 'gql' }] } } });
    const deleted = await t.graphql(`mutation { deleteProvider(slug: "gql") { slug status } }`);
    expect(deleted.body).toEqual({ data: { deleteProvider: { slug: 'gql', status: 'archived' } } });
  });

  it('batches the integration of every provider in a list (query count does not grow with rows)', async () => {
    const queries: string[] = [];
    const counted = await createTestApp({}, { onQuery: (sql) => queries.push(sql) });
    try {
      for (const name of ['A', 'B', 'C']) await counted.request('POST', '/v1/integrations', { body: { name, ai_provider_id: 'local' } });
      await counted.request('PUT', '/v1/integrations/a/workspaces', { body: { global_workspace_access: { enabled: true } } });
      await counted.request('PUT', '/v1/integrations/b/workspaces', { body: { global_workspace_access: { enabled: true } } });
      await counted.request('PUT', '/v1/integrations/c/workspaces', { body: { global_workspace_access: { enabled: true } } });
      queries.length = 0;
      const r = await counted.graphql(`{ providers { total data { slug integration { slug workspaces { total workspaces { enabled } } } } } }`);
      expect(r.data.providers.total).toBe(4);
      expect(r.data.providers.data.every((p: { slug: string; integration: { slug: string } }) => p.integration.slug === p.slug)).toBe(true);
      const selects = queries.filter((q) => /^select/i.test(q));
      // Key lookup aside: count + page, integrations, workspaces + access rows.
      expect(selects.length).toBeLessThanOrEqual(6);
    } finally {
      await counted.close();
    }
  });
});
