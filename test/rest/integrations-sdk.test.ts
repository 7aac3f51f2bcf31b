import { Portkey } from 'portkey-ai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createWorkspaceWithKey } from '../helpers/tenants.js';

/*
 * The portkey-ai SDK against a real server: integrations.create/list/retrieve/update/delete,
 * integrations.workspaces.list/update (which sends `override_existing_workspaces_access`),
 * integrations.models.list/update/delete, and providers. It sends x-portkey-api-key, JSON bodies on DELETE, converts top-level camelCase keys
 * to snake_case, and throws on an empty JSON answer.
 */

const T0 = '2026-11-22T10:00:00.000Z';
const SECRET = 'sk-sdk-secret-value-4242';
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

let t: TestApp;
let clock: ManualClock;
let client: Portkey;
let defaultId: string;
let organisationId: string;

beforeAll(async () => {
  clock = new ManualClock(new Date(T0));
  t = await createTestApp({}, { clock });
  client = new Portkey({ apiKey: t.key, baseURL: `${await t.listen()}/v1` });
  defaultId = (await t.request('GET', '/v1/admin/workspaces/default')).body.id;
  organisationId = t.app.bootstrapResult.organisationId!;
});
afterAll(() => t.close());

/** The SDK adds helpers (getHeaders) to what it returns; compare the JSON. */
function plain(value: unknown): any {
  return JSON.parse(JSON.stringify(value));
}

it('integrations.create / retrieve / list / update / delete', async () => {
  const created = plain(
    await client.integrations.create({
      name: 'OpenAI via SDK',
      slug: 'sdk-openai',
      ai_provider_id: 'openai',
      key: SECRET,
      description: 'made by the SDK',
      configurations: { custom_host: 'http://127.0.0.1:1/v1', openai_organization: 'org-sdk' },
    }),
  );
  expect(created).toEqual({ id: UUID, slug: 'sdk-openai' });

  const expected = {
    id: created.id,
    slug: 'sdk-openai',
    name: 'OpenAI via SDK',
    description: 'made by the SDK',
    ai_provider_id: 'openai',
    status: 'active',
    organisation_id: organisationId,
    object: 'integration',
    masked_key: '************4242',
    configurations: { custom_host: 'http://127.0.0.1:1/v1', openai_organization: 'org-sdk' },
    allow_all_models: true,
    created_at: T0,
    last_updated_at: T0,
  };
  expect(plain(await client.integrations.retrieve({ slug: 'sdk-openai' }))).toEqual(expected);

  const list = plain(await client.integrations.list({ page_size: 10, current_page: 0 }));
  expect(list.object).toBe('list');
  expect(list.total).toBe(2);
  expect(list.data.map((i: { slug: string }) => i.slug).sort()).toEqual(['local', 'sdk-openai']);

  expect(plain(await client.integrations.update({ slug: 'sdk-openai', name: 'Renamed', configurations: { default_model: 'gpt-4o-mini' } }))).toEqual({});
  expect(plain(await client.integrations.retrieve({ slug: 'sdk-openai' }))).toEqual({
    ...expected,
    name: 'Renamed',
    configurations: { custom_host: 'http://127.0.0.1:1/v1', openai_organization: 'org-sdk', default_model: 'gpt-4o-mini' },
  });

  expect(plain(await client.integrations.delete({ slug: 'sdk-openai' }))).toEqual({});
  await expect(client.integrations.retrieve({ slug: 'sdk-openai' })).rejects.toMatchObject({ status: 404 });
});

it('integrations.workspaces.update / list (override_existing_workspaces_access)', async () => {
  clock.set('2026-11-22T11:00:00.000Z');
  const team = await createWorkspaceWithKey(t, 'SDK team');
  expect(plain(await client.integrations.create({ name: 'Second', slug: 'second', ai_provider_id: 'local' }))).toEqual({ id: UUID, slug: 'second' });

  expect(
    plain(
      await client.integrations.workspaces.update({
        slug: 'second',
        workspaces: [{ id: team.slug, enabled: true, usage_limits: [{ credit_limit: 10, periodic_reset: 'monthly', alert_threshold: 9 }], rate_limits: [{ type: 'requests', unit: 'rpd', value: 100 }] }],
        global_workspace_access: { enabled: true, rate_limits: [{ type: 'requests', unit: 'rpm', value: 30 }] },
        override_existing_workspaces_access: true,
      }),
    ),
  ).toEqual({});

  expect(plain(await client.integrations.workspaces.list({ slug: 'second' }))).toEqual({
    total: 2,
    workspaces: [
      { id: defaultId, enabled: true, usage_limits: null, rate_limits: [{ type: 'requests', unit: 'rpm', value: 30 }] },
      {
        id: team.workspaceId,
        enabled: true,
        usage_limits: [{ type: 'cost', credit_limit: 10, alert_threshold: 9, periodic_reset: 'monthly' }],
        rate_limits: [{ type: 'requests', unit: 'rpd', value: 100 }],
      },
    ],
  });

  // A bad item through the SDK: a 400 with param, and nothing changed.
  await expect(
    client.integrations.workspaces.update({ slug: 'second', workspaces: [{ id: 'default', enabled: false }, { id: team.slug, enabled: true, rate_limits: [{}, {}] }] }),
  ).rejects.toMatchObject({ status: 400 });
  expect(plain(await client.integrations.workspaces.list({ slug: 'second' })).workspaces[0].enabled).toBe(true);
});

it('integrations.models.update / list / delete: a custom model with its price', async () => {
  const pricing = { type: 'static', pay_as_you_go: { request_token: { price: 0.0001 }, response_token: { price: 0.0003 } } };
  expect(plain(await client.integrations.models.update({ slug: 'second', models: [{ slug: 'team-model', enabled: true, is_custom: true, pricing_config: pricing }] }))).toEqual({});
  expect(plain(await client.integrations.models.list({ slug: 'second' }))).toEqual({
    total: 2,
    models: [
      { slug: 'local', name: 'local', enabled: true, is_custom: false, is_finetune: false, base_model_slug: null, pricing_config: { type: 'static', pay_as_you_go: { request_token: { price: 0 }, response_token: { price: 0 } } } },
      { slug: 'team-model', name: 'team-model', enabled: true, is_custom: true, is_finetune: false, base_model_slug: null, pricing_config: pricing },
    ],
  });
  await expect(client.integrations.models.update({ slug: 'second', models: [{ slug: 'team-model' }] })).rejects.toMatchObject({ status: 400 });
  expect(plain(await client.integrations.models.delete({ slug: 'second', slugs: 'team-model' }))).toEqual({});
  expect(plain(await client.integrations.models.list({ slug: 'second' })).total).toBe(1);
});

it('providers.create / retrieve / list / update / delete', async () => {
  const created = plain(await client.providers.create({ name: 'Second, strict', integration_id: 'second', slug: 'second-strict' }));
  expect(created).toEqual({ id: UUID, slug: 'second-strict' });
  const got = plain(await client.providers.retrieve({ slug: 'second-strict' }));
  expect(got).toMatchObject({ id: created.id, slug: 'second-strict', name: 'Second, strict', workspace_id: defaultId, object: 'provider' });
  // Its integration_id addresses the integration it was created for.
  expect(plain(await client.integrations.retrieve({ slug: got.integration_id }))).toMatchObject({ slug: 'second', ai_provider_id: 'local' });
  const list = plain(await client.providers.list({ workspace_id: defaultId }));
  expect(list.data.map((p: { slug: string }) => p.slug).sort()).toEqual(['local', 'second', 'second-strict']);
  expect(plain(await client.providers.update({ slug: 'second-strict', note: 'from the SDK' }))).toEqual({ id: created.id, slug: 'second-strict' });
  expect(plain(await client.providers.retrieve({ slug: 'second-strict' })).note).toBe('from the SDK');
  expect(plain(await client.providers.delete({ slug: 'second-strict' }))).toEqual({});
  await expect(client.providers.retrieve({ slug: 'second-strict' })).rejects.toMatchObject({ status: 404 });
});
