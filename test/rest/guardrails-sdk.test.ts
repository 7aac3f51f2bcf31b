import { Portkey } from 'portkey-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let client: Portkey;
let keyId: string;
let orgId: string;

beforeAll(async () => {
  t = await createTestApp();
  client = new Portkey({ apiKey: t.key, baseURL: `${await t.listen()}/v1` });
  const viewer = await t.graphql('{ viewer { organisation { id } apiKey { id } } }');
  keyId = viewer.data.viewer.apiKey.id;
  orgId = viewer.data.viewer.organisation.id;
});
afterAll(() => t.close());

/** The SDK adds `getHeaders` to every response; the rest is the body. */
const bodyOf = <T extends object>(response: T) => {
  const { getHeaders: _h, ...rest } = response as T & { getHeaders?: unknown };
  return rest;
};

const checks = [
  {
    id: 'default.jwt',
    name: 'JWT',
    is_enabled: true,
    parameters: { jwksUri: 'https://issuer.test/jwks.json', headerKey: 'Authorization', cacheMaxAge: 86400, clockTolerance: 5, maxTokenAge: '1d', algorithms: ['RS256'] },
  },
];
const actions = {
  deny: true,
  async: false,
  on_success: { feedback: { value: 5, weight: 1, metadata: '' } },
  on_fail: { feedback: { value: -5, weight: 1, metadata: '' } },
};

describe('portkey-ai SDK: client.guardrails', () => {
  it('create → retrieve → update → list → delete', async () => {
    const created = bodyOf(await client.guardrails.create({ name: 'SDK guardrail', checks, actions }));
    expect(created).toEqual({ id: expect.any(String), slug: expect.stringMatching(/^guard_/), version_id: expect.any(String) });

    const retrieved = bodyOf(await client.guardrails.retrieve({ guardrail_id: created.slug }));
    expect(retrieved).toEqual({
      id: created.id,
      name: 'SDK guardrail',
      slug: created.slug,
      organisation_id: orgId,
      workspace_id: null,
      status: 'active',
      created_at: expect.any(String),
      last_updated_at: expect.any(String),
      owner_id: keyId,
      updated_by: keyId,
      checks,
      actions,
    });

    // The SDK strips guardrail_id from the body and sends the rest with PUT.
    const updated = bodyOf(await client.guardrails.update({ guardrail_id: created.id, name: 'SDK guardrail v2', actions: { ...actions, deny: false } }));
    expect(updated).toEqual({ id: created.id, slug: created.slug, version_id: expect.any(String) });
    expect(updated.version_id).not.toBe(created.version_id);
    const after = bodyOf(await client.guardrails.retrieve({ guardrail_id: created.id }));
    expect(after).toMatchObject({ name: 'SDK guardrail v2', checks, actions: { ...actions, deny: false } });
    // The document's GuardrailDetails has no version_id; create and update answer it.
    expect(after).not.toHaveProperty('version_id');

    const list = bodyOf(await client.guardrails.list({ page_size: 10, current_page: 0 }));
    expect(list).toEqual({
      data: [
        {
          id: created.id,
          name: 'SDK guardrail v2',
          slug: created.slug,
          organisation_id: orgId,
          workspace_id: null,
          status: 'active',
          created_at: retrieved.created_at,
          last_updated_at: after.last_updated_at,
          owner_id: keyId,
          updated_by: keyId,
        },
      ],
      total: 1,
    });

    // The SDK sends {"guardrail_id": …} as the body of the DELETE.
    const deleted = bodyOf(await client.guardrails.delete({ guardrail_id: created.id }));
    expect(deleted).toEqual({});
    expect(bodyOf(await client.guardrails.list()).total).toBe(0);
    expect(bodyOf(await client.guardrails.retrieve({ guardrail_id: created.id })).status).toBe('archived');
  });

  it('surfaces 400 and 404 as APIError with our envelope', async () => {
    await expect(client.guardrails.create({ name: 'bad', checks: [{ id: 'default.jwt', parameters: { headerKey: 'Authorization' } }], actions })).rejects.toMatchObject({
      status: 400,
      // The SDK keeps the whole response body in `error`.
      error: { error: { message: 'Invalid checks[0].parameters.jwksUri: is required.', type: 'invalid_request_error', param: 'checks[0].parameters.jwksUri', code: 'invalid_value' } },
    });
    await expect(client.guardrails.retrieve({ guardrail_id: 'guard_missing' })).rejects.toMatchObject({
      status: 404,
      error: { error: { message: "Guardrail not found: 'guard_missing'.", type: 'invalid_request_error', param: 'guardrail_id', code: 'guardrail_not_found' } },
    });
  });
});
