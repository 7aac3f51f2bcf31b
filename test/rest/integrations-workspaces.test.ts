import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { resolveProvider } from '../../src/modules/integrations/provider-resolution.js';
import { workspaceAccessLimitSpec } from '../../src/modules/integrations/usage-limits.js';
import { usageEngine } from '../../src/modules/usage/usage-engine.js';
import { createTestApp, type TestApp, type TestResponse } from '../helpers/app.js';
import { error } from '../helpers/errors.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';

// PUT and GET /v1/integrations/{slug}/workspaces: optional fields, both spellings of
// the override flag, global access for unlisted and future workspaces, reset_usage, all or nothing.

let t: TestApp;
// Workspaces are listed in creation order: each is made a second after the previous one.
const clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
let defaultId: string;
let a: { workspaceId: string; slug: string; key: string };
let b: { workspaceId: string; slug: string; key: string };

const PATH = '/v1/integrations/openai/workspaces';

function expectJson(r: TestResponse, status: number, body: unknown): void {
  expect({ status: r.status, body: r.body }).toEqual({ status, body });
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
}

const put = (body: unknown) => t.request('PUT', PATH, { body });
const access = async () => (await t.request('GET', PATH)).body;
const off = (id: string) => ({ id, enabled: false, usage_limits: null, rate_limits: null });
/** A workspace's providers as `slug→integration slug`. */
async function providerSlugs(workspace: string): Promise<string[]> {
  const integrations = (await t.request('GET', '/v1/integrations')).body.data as { id: string; slug: string }[];
  const slugOf = new Map(integrations.map((i) => [i.id, i.slug]));
  const providers = (await t.request('GET', `/v1/providers?workspace_id=${workspace}`)).body.data as { slug: string; integration_id: string }[];
  return providers.map((p) => `${p.slug}→${slugOf.get(p.integration_id)}`).sort();
}

beforeAll(async () => {
  t = await createTestApp({}, { clock });
  defaultId = (await t.request('GET', '/v1/admin/workspaces/default')).body.id;
  clock.advance(1000);
  a = await createWorkspaceWithKey(t, 'Team A');
  clock.advance(1000);
  b = await createWorkspaceWithKey(t, 'Team B');
  const created = await t.request('POST', '/v1/integrations', { body: { name: 'OpenAI', slug: 'openai', ai_provider_id: 'openai', key: 'sk-test-0000' } });
  expect(created.status).toBe(200);
});
afterAll(() => t.close());

describe('GET', () => {
  it('starts with every workspace present and disabled (no global access yet)', async () => {
    expectJson(await t.request('GET', PATH), 200, { total: 3, workspaces: [off(defaultId), off(a.workspaceId), off(b.workspaceId)] });
  });

  it('404 for an unknown integration', async () => {
    expectJson(await t.request('GET', '/v1/integrations/nope/workspaces'), 404, error("No integration found with slug 'nope'.", null, 'integration_not_found'));
    expectJson(await t.request('PUT', '/v1/integrations/nope/workspaces', { body: {} }), 404, error("No integration found with slug 'nope'.", null, 'integration_not_found'));
  });
});

describe('PUT', () => {
  it('accepts an empty body and changes nothing', async () => {
    const before = await access();
    expectJson(await put({}), 200, {});
    expect(await access()).toEqual(before);
  });

  it('sets listed workspaces by id or slug, with limits, and creates their provider', async () => {
    expectJson(
      await put({
        workspaces: [
          {
            id: a.workspaceId,
            enabled: true,
            usage_limits: [{ credit_limit: 10, alert_threshold: 8, periodic_reset: 'monthly' }],
            rate_limits: [{ type: 'requests', unit: 'rpd', value: 100 }],
          },
          { id: b.slug, enabled: false },
        ],
      }),
      200,
      {},
    );
    expectJson(await t.request('GET', PATH), 200, {
      total: 3,
      workspaces: [
        off(defaultId),
        {
          id: a.workspaceId,
          enabled: true,
          usage_limits: [{ type: 'cost', credit_limit: 10, alert_threshold: 8, periodic_reset: 'monthly' }],
          rate_limits: [{ type: 'requests', unit: 'rpd', value: 100 }],
        },
        off(b.workspaceId),
      ],
    });
    expect(await providerSlugs(a.slug)).toEqual(['local→local', 'openai→openai']);
    expect(await providerSlugs(b.slug)).toEqual(['local→local']);
  });

  it('global access applies to workspaces that follow it, not to ones set one by one', async () => {
    expectJson(await put({ global_workspace_access: { enabled: true, rate_limits: [{ unit: 'rpm', value: 5 }] } }), 200, {});
    const rows = (await access()).workspaces;
    expect(rows[0]).toEqual({ id: defaultId, enabled: true, usage_limits: null, rate_limits: [{ type: 'requests', unit: 'rpm', value: 5 }] });
    expect(rows[1].rate_limits).toEqual([{ type: 'requests', unit: 'rpd', value: 100 }]);
    expect(rows[2]).toEqual(off(b.workspaceId));
    expect(await providerSlugs('default')).toEqual(['local→local', 'openai→openai']);
    const integration = (await t.request('GET', '/v1/integrations/openai')).body;
    expect(integration.global_workspace_access_settings).toEqual({ enabled: true, usage_limits: null, rate_limits: [{ type: 'requests', unit: 'rpm', value: 5 }] });
  });

  it('workspaces created later get the global access and their provider', async () => {
    clock.advance(1000);
    const c = await createWorkspaceWithKey(t, 'Team C');
    const rows = (await access()).workspaces;
    expect(rows).toHaveLength(4);
    expect(rows[3]).toEqual({ id: c.workspaceId, enabled: true, usage_limits: null, rate_limits: [{ type: 'requests', unit: 'rpm', value: 5 }] });
    expect(await providerSlugs(c.slug)).toEqual(['local→local', 'openai→openai']);
  });

  it('override_existing_workspaces_access (the SDK spelling) resets every unlisted workspace to the global access', async () => {
    expectJson(
      await put({ workspaces: [{ id: a.slug, enabled: true }], global_workspace_access: { enabled: false, rate_limits: null }, override_existing_workspaces_access: true }),
      200,
      {},
    );
    const rows = (await access()).workspaces;
    // Listed: enabled, and the limits it had (left out of the item) are kept.
    expect(rows[1]).toEqual({
      id: a.workspaceId,
      enabled: true,
      usage_limits: [{ type: 'cost', credit_limit: 10, alert_threshold: 8, periodic_reset: 'monthly' }],
      rate_limits: [{ type: 'requests', unit: 'rpd', value: 100 }],
    });
    expect([rows[0], rows[2], rows[3]]).toEqual([off(defaultId), off(b.workspaceId), off(rows[3].id)]);
  });

  it('override_existing_workspace_access (the contract spelling) does the same', async () => {
    expectJson(await put({ global_workspace_access: { enabled: true }, override_existing_workspace_access: true }), 200, {});
    const rows = (await access()).workspaces;
    expect(rows.map((r: { enabled: boolean }) => r.enabled)).toEqual([true, true, true, true]);
    expect(rows[1]).toEqual({ id: a.workspaceId, enabled: true, usage_limits: null, rate_limits: null });
  });

  it('without override, a workspace set one by one keeps its own settings', async () => {
    expectJson(await put({ workspaces: [{ id: b.workspaceId, enabled: false }] }), 200, {});
    expectJson(await put({ global_workspace_access: { enabled: true, usage_limits: [{ type: 'tokens', credit_limit: 1000 }] } }), 200, {});
    const rows = (await access()).workspaces;
    expect(rows[2]).toEqual(off(b.workspaceId));
    expect(rows[0].usage_limits).toEqual([{ type: 'tokens', credit_limit: 1000, periodic_reset: null }]);
  });

  it('disabling keeps the provider, which then resolves to 403 integration_disabled; enabling again reuses it', async () => {
    const em = () => t.app.runtime.fork();
    const before = await resolveProvider(em(), t.app.runtime, defaultId, 'openai');
    expectJson(await put({ workspaces: [{ id: 'default', enabled: false }] }), 200, {});
    await expect(resolveProvider(em(), t.app.runtime, defaultId, 'openai')).rejects.toMatchObject({
      status: 403,
      code: 'integration_disabled',
      message: "Integration 'openai' (virtual key 'openai') is disabled for this workspace.",
    });
    expectJson(await put({ workspaces: [{ id: 'default', enabled: true }] }), 200, {});
    const after = await resolveProvider(em(), t.app.runtime, defaultId, 'openai');
    expect(after.provider.id).toBe(before.provider.id);
    expect(await providerSlugs('default')).toEqual(['local→local', 'openai→openai']);
  });
});

describe('PUT validation: all or nothing, with param', () => {
  // Item 0 is valid and would change team B; item 1 (or a later field) is not.
  const valid = () => ({ id: 'team-b', enabled: true, rate_limits: [{ unit: 'rph', value: 7 }] });

  it.each([
    [{ workspaces: 'all' }, 400, error("Invalid type for 'workspaces': expected an array, but got a string instead.", 'workspaces', 'invalid_type')],
    [{ workspaces: [valid(), { enabled: true }] }, 400, error("Missing required parameter: 'workspaces[1].id'.", 'workspaces[1].id', 'missing_required_parameter')],
    [{ workspaces: [valid(), { id: 'default' }] }, 400, error("Missing required parameter: 'workspaces[1].enabled'.", 'workspaces[1].enabled', 'missing_required_parameter')],
    [
      { workspaces: [valid(), { id: 'default', enabled: 'yes' }] },
      400,
      error("Invalid type for 'workspaces[1].enabled': expected a boolean, but got a string instead.", 'workspaces[1].enabled', 'invalid_type'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, rate_limits: [{ unit: 'rpm', value: 1 }, { unit: 'rpd', value: 9 }] }] },
      400,
      error("Invalid value for 'workspaces[1].rate_limits': at most one rate limit is allowed, got 2.", 'workspaces[1].rate_limits', 'invalid_value'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, usage_limits: [{ credit_limit: 1 }, { credit_limit: 2 }] }] },
      400,
      error("Invalid value for 'workspaces[1].usage_limits': at most one usage limit is allowed, got 2.", 'workspaces[1].usage_limits', 'invalid_value'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, usage_limits: { credit_limit: 1 } }] },
      400,
      error("Invalid type for 'workspaces[1].usage_limits': expected an array, but got an object instead.", 'workspaces[1].usage_limits', 'invalid_type'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, usage_limits: [{ alert_threshold: 1 }] }] },
      400,
      error("Missing required parameter: 'workspaces[1].usage_limits[0].credit_limit'.", 'workspaces[1].usage_limits[0].credit_limit', 'missing_required_parameter'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, usage_limits: [{ credit_limit: -5 }] }] },
      400,
      error(
        "Invalid value for 'workspaces[1].usage_limits[0].credit_limit': credit_limit must be a number greater than or equal to 0.",
        'workspaces[1].usage_limits[0].credit_limit',
        'invalid_value',
      ),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, usage_limits: [{ credit_limit: 5, alert_threshold: 5 }] }] },
      400,
      error(
        "Invalid value for 'workspaces[1].usage_limits[0].alert_threshold': alert_threshold must be less than credit_limit.",
        'workspaces[1].usage_limits[0].alert_threshold',
        'invalid_value',
      ),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, usage_limits: [{ credit_limit: 5, periodic_reset: 'daily' }] }] },
      400,
      error(
        "Invalid value for 'workspaces[1].usage_limits[0].periodic_reset': expected one of 'monthly', 'weekly'.",
        'workspaces[1].usage_limits[0].periodic_reset',
        'invalid_value',
      ),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, usage_limits: [{ credit_limit: 5, type: 'requests' }] }] },
      400,
      error("Invalid value for 'workspaces[1].usage_limits[0].type': expected one of 'cost', 'tokens'.", 'workspaces[1].usage_limits[0].type', 'invalid_value'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, rate_limits: [{ unit: 'rps', value: 1 }] }] },
      400,
      error("Invalid value for 'workspaces[1].rate_limits[0].unit': expected one of 'rpm', 'rph', 'rpd'.", 'workspaces[1].rate_limits[0].unit', 'invalid_value'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, rate_limits: [{ type: 'tokens', unit: 'rpm', value: 1 }] }] },
      400,
      error("Invalid value for 'workspaces[1].rate_limits[0].type': expected one of 'requests'.", 'workspaces[1].rate_limits[0].type', 'invalid_value'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, rate_limits: [{ unit: 'rpm', value: 0 }] }] },
      400,
      error("Invalid value for 'workspaces[1].rate_limits[0].value': expected an integer from 1 to 1000000000.", 'workspaces[1].rate_limits[0].value', 'invalid_value'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, rate_limits: [{ unit: 'rpm', value: 5000000000 }] }] },
      400,
      error("Invalid value for 'workspaces[1].rate_limits[0].value': expected an integer from 1 to 1000000000.", 'workspaces[1].rate_limits[0].value', 'invalid_value'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, rate_limits: [{ unit: 'rpm', value: 2.5 }] }] },
      400,
      error("Invalid type for 'workspaces[1].rate_limits[0].value': expected an integer, but got a decimal instead.", 'workspaces[1].rate_limits[0].value', 'invalid_type'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, rate_limits: [{ unit: 'rpm' }] }] },
      400,
      error("Missing required parameter: 'workspaces[1].rate_limits[0].value'.", 'workspaces[1].rate_limits[0].value', 'missing_required_parameter'),
    ],
    [
      { workspaces: [valid(), { id: 'nowhere', enabled: true }] },
      404,
      error("Workspace not found: 'nowhere'.", 'workspaces[1].id', 'workspace_not_found'),
    ],
    [
      { workspaces: [valid(), { id: 'team-b', enabled: false }] },
      400,
      error("Workspace 'team-b' is listed twice (also as workspaces[0]).", 'workspaces[1].id', 'invalid_value'),
    ],
    [
      { workspaces: [valid()], global_workspace_access: { rate_limits: [] } },
      400,
      error("Missing required parameter: 'global_workspace_access.enabled'.", 'global_workspace_access.enabled', 'missing_required_parameter'),
    ],
    [
      { workspaces: [valid()], global_workspace_access: { enabled: true, rate_limits: [{ unit: 'rpm', value: 1 }, { unit: 'rpm', value: 2 }] } },
      400,
      error("Invalid value for 'global_workspace_access.rate_limits': at most one rate limit is allowed, got 2.", 'global_workspace_access.rate_limits', 'invalid_value'),
    ],
    [
      { workspaces: [valid()], override_existing_workspace_access: 'yes' },
      400,
      error("Invalid type for 'override_existing_workspace_access': expected a boolean, but got a string instead.", 'override_existing_workspace_access', 'invalid_type'),
    ],
    [
      { workspaces: [valid(), { id: 'default', enabled: true, reset_usage: 1 }] },
      400,
      error("Invalid type for 'workspaces[1].reset_usage': expected a boolean, but got an integer instead.", 'workspaces[1].reset_usage', 'invalid_type'),
    ],
  ])('%j → %i and nothing changes', async (body, status, expected) => {
    const before = await access();
    const integrationBefore = (await t.request('GET', '/v1/integrations/openai')).body;
    expectJson(await put(body), status, expected);
    expect(await access()).toEqual(before);
    expect((await t.request('GET', '/v1/integrations/openai')).body).toEqual(integrationBefore);
  });

  it("another organisation's workspace does not exist here", async () => {
    const other = await createOtherOrganisation(t);
    const before = await access();
    expectJson(await put({ workspaces: [valid(), { id: other.workspaceId, enabled: true }] }), 404, error(`Workspace not found: '${other.workspaceId}'.`, 'workspaces[1].id', 'workspace_not_found'));
    expect(await access()).toEqual(before);
  });

  it('the valid item alone goes through', async () => {
    expectJson(await put({ workspaces: [valid()] }), 200, {});
    expect((await access()).workspaces[2]).toEqual({ id: b.workspaceId, enabled: true, usage_limits: null, rate_limits: [{ type: 'requests', unit: 'rph', value: 7 }] });
  });
});

describe('usage and reset_usage', () => {
  const usageOf = async () => {
    const r = await t.graphql(`{ integrationWorkspaces(slug: "openai") { workspaces { workspaceId usage { currentUsage status periodKey } } } }`);
    return r.data.integrationWorkspaces.workspaces.find((w: { workspaceId: string }) => w.workspaceId === a.workspaceId).usage;
  };

  it('counts usage on the shared engine and zeroes it on reset_usage: true', async () => {
    expectJson(await put({ workspaces: [{ id: a.slug, enabled: true, usage_limits: [{ type: 'tokens', credit_limit: 100 }] }] }), 200, {});
    const resolved = await resolveProvider(t.app.runtime.fork(), t.app.runtime, a.workspaceId, 'openai');
    const spec = workspaceAccessLimitSpec(resolved)!;
    expect(spec).toMatchObject({ ownerType: 'workspace_access', ownerId: resolved.access.id, valueKey: `workspace:${a.workspaceId}`, type: 'tokens', creditLimit: 100 });
    expect(await usageOf()).toEqual({ currentUsage: 0, status: 'active', periodKey: 'all' });

    await usageEngine(t.app.runtime).record([spec], { tokens: 120, cost: 0 });
    expect(await usageOf()).toEqual({ currentUsage: 120, status: 'exhausted', periodKey: 'all' });
    expect(await usageEngine(t.app.runtime).check([spec])).toMatchObject({ ok: false });

    // An invalid request resets nothing (all or nothing).
    expect((await put({ workspaces: [{ id: a.slug, enabled: true, reset_usage: true }, { id: 'nowhere', enabled: true }] })).status).toBe(404);
    expect(await usageOf()).toEqual({ currentUsage: 120, status: 'exhausted', periodKey: 'all' });

    expectJson(await put({ workspaces: [{ id: a.slug, enabled: true, reset_usage: true }] }), 200, {});
    expect(await usageOf()).toEqual({ currentUsage: 0, status: 'active', periodKey: 'all' });
    expect(await usageEngine(t.app.runtime).check([spec])).toEqual({ ok: true });
    // The limit itself stays.
    expect((await access()).workspaces[1].usage_limits).toEqual([{ type: 'tokens', credit_limit: 100, periodic_reset: null }]);
  });

  it('gives the next reset of the current period (GraphQL nextResetAt), null when the limit never resets', async () => {
    const nextResetAt = async () =>
      (await t.graphql(`{ integrationWorkspaces(slug: "openai") { workspaces { workspaceId usage { nextResetAt } } } }`)).data.integrationWorkspaces.workspaces.find(
        (w: { workspaceId: string }) => w.workspaceId === a.workspaceId,
      ).usage.nextResetAt;
    const limit = async (periodic_reset: string | null) =>
      expectJson(await put({ workspaces: [{ id: a.slug, enabled: true, usage_limits: [{ type: 'tokens', credit_limit: 100, periodic_reset }] }] }), 200, {});
    // The clock stands on Sunday 2026-11-22: the week ends at Monday's midnight, the month on December 1st.
    await limit('weekly');
    expect(await nextResetAt()).toBe('2026-11-23T00:00:00.000Z');
    await limit('monthly');
    expect(await nextResetAt()).toBe('2026-12-01T00:00:00.000Z');
    await limit(null);
    expect(await nextResetAt()).toBeNull();
  });
});

describe('workspace keys', () => {
  it('see only their own workspace and cannot change access (403)', async () => {
    expectJson(await t.request('GET', PATH, { key: a.key }), 200, {
      total: 1,
      workspaces: [{ id: a.workspaceId, enabled: true, usage_limits: [{ type: 'tokens', credit_limit: 100, periodic_reset: null }], rate_limits: null }],
    });
    expectJson(
      await t.request('PUT', PATH, { key: a.key, body: { workspaces: [{ id: a.workspaceId, enabled: true }] } }),
      403,
      error('This operation needs an organisation API key.', null, 'permission_denied', 'permission_error'),
    );
  });
});

describe('GraphQL mirrors REST', () => {
  it('updateIntegrationWorkspaces takes the same input and answers the access afterwards', async () => {
    const r = await t.graphql(
      `mutation($input: UpdateIntegrationWorkspacesInput!) {
        updateIntegrationWorkspaces(slug: "openai", input: $input) { total workspaces { workspaceId enabled inheritsGlobal rateLimits { unit value } } }
      }`,
      { input: { workspaces: [{ id: b.slug, enabled: false, rateLimits: null }], globalWorkspaceAccess: { enabled: false }, overrideExistingWorkspaceAccess: false } },
    );
    expect(r.errors).toBeUndefined();
    const row = r.data.updateIntegrationWorkspaces.workspaces.find((w: { workspaceId: string }) => w.workspaceId === b.workspaceId);
    expect(row).toEqual({ workspaceId: b.workspaceId, enabled: false, inheritsGlobal: false, rateLimits: null });
    expect(r.data.updateIntegrationWorkspaces.total).toBe(4);
  });

  it('reports the same validation errors with param', async () => {
    const r = await t.graphql(`mutation { updateIntegrationWorkspaces(slug: "openai", input: { workspaces: [{ id: "default", enabled: true, rateLimits: [{ unit: "rpm", value: 0 }] }] }) { total } }`);
    expect(r.errors?.[0]).toMatchObject({
      message: "Invalid value for 'workspaces[0].rate_limits[0].value': expected an integer from 1 to 1000000000.",
      extensions: { status: 400, param: 'workspaces[0].rate_limits[0].value', code: 'invalid_value' },
    });
  });
});
