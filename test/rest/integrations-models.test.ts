/**
 * `GET|PUT|DELETE /v1/integrations/{slug}/models`: the catalogue and custom models an integration
 * offers, tied to `GET /v1/models` (a workspace sees the enabled ones) and to the price table (a
 * custom model's price set here is what the request log charges). Bad input: the same refusal
 * through REST and GraphQL.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_KEY, type TestApp, type TestResponse } from '../helpers/app.js';
import { expectBothDoors } from '../helpers/both-doors.js';
import { error } from '../helpers/errors.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';

let t: TestApp;
let baseURL: string;
beforeAll(async () => {
  t = await createTestApp();
  baseURL = `${await t.listen()}/v1`;
});
afterAll(() => t.close());

function expectJson(r: TestResponse, status: number, body: unknown): void {
  expect({ status: r.status, body: r.body }).toEqual({ status, body });
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
}

/** A price in Portkey's terms: US cents per token. */
const priced = (request: number, response: number) => ({ type: 'static', pay_as_you_go: { request_token: { price: request }, response_token: { price: response } } });

const model = (slug: string, extra: Record<string, unknown> = {}) => ({
  slug,
  name: slug,
  enabled: true,
  is_custom: false,
  is_finetune: false,
  base_model_slug: null,
  ...extra,
});

async function modelIds(key = t.key): Promise<string[]> {
  const r = await t.request('GET', '/v1/models', { key });
  expect(r.status).toBe(200);
  return r.body.data.map((m: { id: string }) => m.id);
}

const PUT_MODELS = 'mutation($slug: String!, $input: UpdateIntegrationModelsInput!) { updateIntegrationModels(slug: $slug, input: $input) { total } }';

describe('the local integration', () => {
  it('offers its catalogue model, priced at zero', async () => {
    expectJson(await t.request('GET', '/v1/integrations/local/models'), 200, { total: 1, models: [model('local', { pricing_config: priced(0, 0) })] });
  });

  it('adds a custom model with its price; GET /v1/models lists it; the request log charges that price', async () => {
    expectJson(
      await t.request('PUT', '/v1/integrations/local/models', {
        body: { models: [{ slug: 'house-model', enabled: true, is_custom: true, pricing_config: priced(0.1, 0.2) }] },
      }),
      200,
      {},
    );
    expectJson(await t.request('GET', '/v1/integrations/local/models'), 200, {
      total: 2,
      models: [model('local', { pricing_config: priced(0, 0) }), model('house-model', { is_custom: true, pricing_config: priced(0.1, 0.2) })],
    });
    expect(await modelIds()).toEqual(['@local/local', '@local/house-model']);

    const openai = new OpenAI({ apiKey: TEST_KEY, baseURL, maxRetries: 0 });
    const completion = await openai.chat.completions.create({ model: '@local/house-model', messages: [{ role: 'user', content: 'What does this cost?' }] });
    const { prompt_tokens, completion_tokens } = completion.usage!;
    // 0.1 cents per prompt token is 0.001 dollars; 0.2 cents per completion token 0.002.
    const dollars = prompt_tokens * 0.001 + completion_tokens * 0.002;
    expect(dollars).toBeGreaterThan(0);
    let logged: any;
    for (let i = 0; i < 200 && !logged; i++) {
      logged = (await t.request('GET', '/v1/logs?limit=100')).body.data?.find((r: { model: string }) => r.model === 'house-model');
      if (!logged) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(logged?.cost).toBeCloseTo(dollars, 9);
  });

  it('a disabled model leaves GET /v1/models and is refused before any model work (chat and runs); enabling it again brings it back', async () => {
    expectJson(await t.request('PUT', '/v1/integrations/local/models', { body: { models: [{ slug: 'house-model', enabled: false }] } }), 200, {});
    expect(await modelIds()).toEqual(['@local/local']);
    const refused = error("Model 'house-model' is not offered by integration 'local': enable it with PUT /v1/integrations/local/models.", 'model', 'model_not_offered');
    const chat = await t.request('POST', '/v1/chat/completions', { body: { model: '@local/house-model', messages: [{ role: 'user', content: 'Hi' }] } });
    expectJson(chat, 400, refused);
    const beta = { 'OpenAI-Beta': 'assistants=v2', 'x-gateway-virtual-key': 'local' };
    const assistant = await t.request('POST', '/v1/assistants', { body: { model: 'house-model' }, headers: beta });
    const run = await t.request('POST', '/v1/threads/runs', { body: { assistant_id: assistant.body.id, thread: { messages: [{ role: 'user', content: 'Hi' }] } }, headers: beta });
    expectJson(run, 400, refused);
    // Left out, the price stays.
    const models = (await t.request('GET', '/v1/integrations/local/models')).body.models;
    expect(models[1]).toEqual(model('house-model', { enabled: false, is_custom: true, pricing_config: priced(0.1, 0.2) }));
    expectJson(await t.request('PUT', '/v1/integrations/local/models', { body: { models: [{ slug: 'house-model', enabled: true }] } }), 200, {});
    expect(await modelIds()).toEqual(['@local/local', '@local/house-model']);
  });

  it('DELETE ?slugs= removes custom models and their prices, all or nothing; catalogue models can only be disabled', async () => {
    expectJson(
      await t.request('DELETE', '/v1/integrations/local/models?slugs=house-model,local'),
      400,
      error("'local' is not a custom model of integration 'local': only custom models can be deleted (disable a catalogue model with PUT).", 'slugs', 'invalid_value'),
    );
    expect(await modelIds()).toEqual(['@local/local', '@local/house-model']);
    expectJson(await t.request('DELETE', '/v1/integrations/local/models?slugs=house-model'), 200, {});
    expectJson(await t.request('GET', '/v1/integrations/local/models'), 200, { total: 1, models: [model('local', { pricing_config: priced(0, 0) })] });
    expect(await modelIds()).toEqual(['@local/local']);
  });
});

describe('an openai integration', () => {
  beforeAll(async () => {
    expect((await t.request('POST', '/v1/integrations', { body: { name: 'OpenAI', slug: 'oa', ai_provider_id: 'openai', key: 'sk-x', configurations: { base_url: 'http://127.0.0.1:9/v1' } } })).status).toBe(200);
    expect((await t.request('PUT', '/v1/integrations/oa/workspaces', { body: { workspaces: [{ id: 'default', enabled: true }] } })).status).toBe(200);
  });

  it('offers the shipped catalogue at its shipped prices (US cents per token)', async () => {
    const r = await t.request('GET', '/v1/integrations/oa/models');
    expect(r.body.total).toBe(r.body.models.length);
    expect(r.body.models.find((m: { slug: string }) => m.slug === 'gpt-4o')).toEqual(model('gpt-4o', { pricing_config: priced(0.00025, 0.001) }));
    expect(await modelIds()).toContain('@oa/gpt-4o-mini');
  });

  it('allow_all_models: false offers only the models set one by one; a catalogue price can be overridden and given back', async () => {
    expectJson(
      await t.request('PUT', '/v1/integrations/oa/models', {
        body: { allow_all_models: false, models: [{ slug: 'gpt-4o-mini', enabled: true, pricing_config: priced(0.00001, 0.00004) }, { slug: 'my-finetune', enabled: true, is_custom: true, is_finetune: true, base_model_slug: 'gpt-4o-mini' }] },
      }),
      200,
      {},
    );
    expect((await modelIds()).filter((id) => id.startsWith('@oa/'))).toEqual(['@oa/gpt-4o-mini', '@oa/my-finetune']);
    // Not set one by one while allow_all_models is off: refused before the (unreachable) upstream is tried.
    const chat = await t.request('POST', '/v1/chat/completions', { body: { model: '@oa/gpt-4o', messages: [{ role: 'user', content: 'Hi' }] } });
    expectJson(chat, 400, error("Model 'gpt-4o' is not offered by integration 'oa': enable it with PUT /v1/integrations/oa/models.", 'model', 'model_not_offered'));
    const models = (await t.request('GET', '/v1/integrations/oa/models')).body.models;
    expect(models.find((m: { slug: string }) => m.slug === 'gpt-4o-mini')).toEqual(model('gpt-4o-mini', { pricing_config: priced(0.00001, 0.00004) }));
    // No price known for a custom model: pricing_config is left out (cost limits refuse it).
    expect(models.find((m: { slug: string }) => m.slug === 'my-finetune')).toEqual(model('my-finetune', { is_custom: true, is_finetune: true, base_model_slug: 'gpt-4o-mini' }));
    expect((await t.request('GET', '/v1/integrations/oa')).body.allow_all_models).toBe(false);

    expectJson(await t.request('PUT', '/v1/integrations/oa/models', { body: { allow_all_models: true, models: [{ slug: 'gpt-4o-mini', enabled: true, pricing_config: null }] } }), 200, {});
    const after = (await t.request('GET', '/v1/integrations/oa/models')).body.models;
    expect(after.find((m: { slug: string }) => m.slug === 'gpt-4o-mini').pricing_config).toEqual(priced(0.000015, 0.00006));
    expect(await modelIds()).toContain('@oa/gpt-4o');
  });
});

describe('refusals: the same through both front doors', () => {
  it.each([
    [{}, "Missing required parameter: 'models'.", 'models', 'missing_required_parameter'],
    [{ models: [{ slug: 'x' }] }, "Missing required parameter: 'models[0].enabled'.", 'models[0].enabled', 'missing_required_parameter'],
    [
      { models: [{ slug: 'gpt-4o-mini', enabled: true }] },
      "Model 'gpt-4o-mini' is not in the catalogue of provider 'local': send is_custom: true to add it as a custom model.",
      'models[0].slug',
      'invalid_value',
    ],
    [
      { models: [{ slug: 'local', enabled: true, is_custom: true }] },
      "Model 'local' is in the catalogue of provider 'local': it cannot be a custom model.",
      'models[0].is_custom',
      'invalid_value',
    ],
    [
      { models: [{ slug: 'a', enabled: true, is_custom: true }, { slug: 'a', enabled: false }] },
      "Model 'a' is listed twice (also as models[0]).",
      'models[1].slug',
      'invalid_value',
    ],
    [
      { models: [{ slug: 'a', enabled: true, is_custom: true, pricing_config: priced(-1, 1) }] },
      "Invalid value for 'models[0].pricing_config.pay_as_you_go.request_token.price': expected a price ≥ 0 (US cents per token).",
      'models[0].pricing_config.pay_as_you_go.request_token.price',
      'invalid_value',
    ],
  ])('PUT models %j', async (body, message, param, code) => {
    const before = (await t.request('GET', '/v1/integrations/local/models')).body;
    const camel = JSON.parse(JSON.stringify(body).replace(/"is_custom"/g, '"isCustom"').replace(/"pricing_config"/g, '"pricingConfig"').replace(/"pay_as_you_go"/g, '"payAsYouGo"').replace(/"request_token"/g, '"requestToken"').replace(/"response_token"/g, '"responseToken"'));
    await expectBothDoors(t.request('PUT', '/v1/integrations/local/models', { body }), t.graphql(PUT_MODELS, { slug: 'local', input: camel }), message, param, code);
    expect((await t.request('GET', '/v1/integrations/local/models')).body).toEqual(before);
  });

  it('DELETE without slugs', async () => {
    await expectBothDoors(
      t.request('DELETE', '/v1/integrations/local/models?slugs=,'),
      t.graphql('mutation { deleteIntegrationModels(slug: "local", slugs: ",") { total } }'),
      "Invalid value for 'slugs': expected a comma-separated list of model slugs.",
      'slugs',
      'invalid_value',
    );
    expectJson(await t.request('DELETE', '/v1/integrations/local/models'), 400, error("Missing required query parameter: 'slugs'.", 'slugs', 'missing_required_parameter'));
  });

  it('an unknown integration is 404', async () => {
    const notFound = error("No integration found with slug 'nope'.", null, 'integration_not_found');
    expectJson(await t.request('GET', '/v1/integrations/nope/models'), 404, notFound);
    expectJson(await t.request('PUT', '/v1/integrations/nope/models', { body: { models: [] } }), 404, notFound);
    expectJson(await t.request('DELETE', '/v1/integrations/nope/models?slugs=a'), 404, notFound);
  });
});

describe('who may do what', () => {
  it('workspace keys read the models but cannot change them (403); another organisation does not see them (404)', async () => {
    const { key } = await createWorkspaceWithKey(t, 'Team models');
    expect((await t.request('GET', '/v1/integrations/local/models', { key })).status).toBe(200);
    const denied = error('This operation needs an organisation API key.', null, 'permission_denied', 'permission_error');
    expectJson(await t.request('PUT', '/v1/integrations/local/models', { key, body: { models: [] } }), 403, denied);
    expectJson(await t.request('DELETE', '/v1/integrations/local/models?slugs=x', { key }), 403, denied);
    const other = await createOtherOrganisation(t);
    expectJson(await t.request('GET', '/v1/integrations/oa/models', { key: other.key }), 404, error("No integration found with slug 'oa'.", null, 'integration_not_found'));
  });
});
