import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';

const T0 = '2031-03-01T09:00:00.000Z';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SLUG = /^guard_[A-Za-z0-9]{24}$/;

let t: TestApp;
let clock: ManualClock;
let orgId: string;
let keyId: string;

beforeAll(async () => {
  clock = new ManualClock(new Date(T0));
  t = await createTestApp({}, { clock });
  const viewer = await t.graphql('{ viewer { organisation { id } apiKey { id } } }');
  orgId = viewer.data.viewer.organisation.id;
  keyId = viewer.data.viewer.apiKey.id;
});
afterAll(() => t.close());

/** A create request as the portkey-ai SDK's documentation spells it. */
const jwtCheck = {
  id: 'default.jwt',
  name: 'JWT',
  is_enabled: true,
  parameters: {
    jwksUri: 'https://issuer.test/.well-known/jwks.json',
    headerKey: 'Authorization',
    cacheMaxAge: 86400,
    clockTolerance: 5,
    maxTokenAge: '1d',
    algorithms: ['RS256'],
  },
};
const fullActions = {
  deny: true,
  async: false,
  on_success: { feedback: { value: 5, weight: 1, metadata: '' } },
  on_fail: { feedback: { value: -5, weight: 1, metadata: '' } },
};
const defaultActions = {
  deny: false,
  async: false,
  on_success: { feedback: { value: 5, weight: 1, metadata: '' } },
  on_fail: { feedback: { value: -5, weight: 1, metadata: '' } },
};

const badRequest = (message: string, param: string | null, code: string) => ({ error: { message, type: 'invalid_request_error', param, code } });
const notFound = (ref: string) => ({
  error: { message: `Guardrail not found: '${ref}'.`, type: 'invalid_request_error', param: 'guardrail_id', code: 'guardrail_not_found' },
});

async function create(body: Record<string, unknown>, key?: string) {
  const res = await t.request('POST', '/v1/guardrails', { body, key });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as { id: string; slug: string; version_id: string };
}

/** The guardrail's current version: GraphQL shows it, REST's record (as Portkey's GuardrailDetails) does not. */
async function currentVersionId(ref: string): Promise<string> {
  const res = await t.graphql('query($ref: String!) { guardrail(idOrSlug: $ref) { versionId } }', { ref });
  expect(res.errors).toBeUndefined();
  return res.data.guardrail.versionId;
}

describe('POST /v1/guardrails', () => {
  it('creates a guardrail: 200 {id, slug, version_id}', async () => {
    const res = await t.request('POST', '/v1/guardrails', { body: { name: 'JWT gate', checks: [jwtCheck], actions: fullActions } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ id: expect.any(String), slug: expect.any(String), version_id: expect.any(String) });
    expect(res.body.id).toMatch(UUID);
    expect(res.body.slug).toMatch(SLUG);
    expect(res.body.version_id).toMatch(UUID);
    expect(res.body.version_id).not.toBe(res.body.id);
  });

  it('fills every parameter and action default, and keeps check names only where given', async () => {
    const created = await create({
      name: 'Defaults',
      checks: [
        { id: 'default.jwt', parameters: { jwksUri: 'https://issuer.test/jwks', headerKey: 'x-token' } },
        { id: 'default.wordCount', name: 'short', is_enabled: false, parameters: { maxWords: 50 } },
      ],
    });
    const res = await t.request('GET', `/v1/guardrails/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: created.id,
      name: 'Defaults',
      slug: created.slug,
      organisation_id: orgId,
      workspace_id: null,
      status: 'active',
      created_at: T0,
      last_updated_at: T0,
      owner_id: keyId,
      updated_by: keyId,
      checks: [
        {
          id: 'default.jwt',
          is_enabled: true,
          parameters: { jwksUri: 'https://issuer.test/jwks', headerKey: 'x-token', cacheMaxAge: 86400, clockTolerance: 5, maxTokenAge: '1d', algorithms: ['RS256'] },
        },
        { id: 'default.wordCount', name: 'short', is_enabled: false, parameters: { minWords: 0, maxWords: 50, not: false } },
      ],
      actions: defaultActions,
    });
  });

  it('creates in a workspace given by slug', async () => {
    const ws = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Guarded', slug: 'guarded' } });
    const created = await create({ name: 'In ws', checks: [jwtCheck], workspace_id: 'guarded' });
    const res = await t.request('GET', `/v1/guardrails/${created.slug}`);
    expect(res.body.workspace_id).toBe(ws.body.id);
  });

  it.each([
    ['no name', { checks: [jwtCheck] }, badRequest("Missing required parameter: 'name'.", 'name', 'missing_required_parameter')],
    ['blank name', { name: '  ', checks: [jwtCheck] }, { error: { message: "'name' must be a non-empty string.", type: 'invalid_request_error', param: 'name', code: null } }],
    ['no checks', { name: 'x' }, badRequest("Missing required parameter: 'checks'.", 'checks', 'missing_required_parameter')],
    ['empty checks', { name: 'x', checks: [] }, badRequest('Invalid checks: must contain at least one check.', 'checks', 'invalid_value')],
    [
      'unknown check id',
      { name: 'x', checks: [jwtCheck, { id: 'default.nope', parameters: {} }] },
      badRequest(
        'Invalid checks[1].id: unknown check "default.nope". Known checks: default.jwt, default.regexMatch, default.wordCount, default.sentenceCount, default.characterCount, default.contains, default.endsWith, default.jsonSchema, default.jsonKeys, default.validUrls, default.alluppercase, default.isAllLowerCase, default.modelWhitelist, default.requiredMetadataKeys.',
        'checks[1].id',
        'invalid_value',
      ),
    ],
    [
      'jwt without jwksUri',
      { name: 'x', checks: [{ id: 'default.jwt', parameters: { headerKey: 'Authorization' } }] },
      badRequest('Invalid checks[0].parameters.jwksUri: is required.', 'checks[0].parameters.jwksUri', 'invalid_value'),
    ],
    [
      'jwt with a non-URL jwksUri',
      { name: 'x', checks: [{ id: 'default.jwt', parameters: { headerKey: 'Authorization', jwksUri: 'not a url' } }] },
      badRequest('Invalid checks[0].parameters.jwksUri: must be an absolute http or https URL.', 'checks[0].parameters.jwksUri', 'invalid_value'),
    ],
    [
      'jwt with a bad maxTokenAge',
      { name: 'x', checks: [{ ...jwtCheck, parameters: { ...jwtCheck.parameters, maxTokenAge: 'forever' } }] },
      badRequest('Invalid checks[0].parameters.maxTokenAge: must be a duration such as 30s, 15m, 2h or 1d.', 'checks[0].parameters.maxTokenAge', 'invalid_value'),
    ],
    [
      'uncompilable regex (a write-time error)',
      { name: 'x', checks: [jwtCheck, { id: 'default.regexMatch', parameters: { rule: '(unclosed' } }] },
      badRequest(
        'Invalid checks[1].parameters.rule: is not a valid regular expression: Invalid regular expression: /(unclosed/: Unterminated group.',
        'checks[1].parameters.rule',
        'invalid_value',
      ),
    ],
    [
      'check entry without id',
      { name: 'x', checks: [{ parameters: {} }] },
      badRequest("Missing required parameter: 'checks[0].id'.", 'checks[0].id', 'missing_required_parameter'),
    ],
    [
      'actions.deny not a boolean',
      { name: 'x', checks: [jwtCheck], actions: { deny: 'yes' } },
      badRequest("Invalid type for 'actions.deny': expected a boolean, but got a string instead.", 'actions.deny', 'invalid_type'),
    ],
    [
      'feedback value not a number',
      { name: 'x', checks: [jwtCheck], actions: { on_fail: { feedback: { value: 'bad' } } } },
      badRequest("Invalid type for 'actions.on_fail.feedback.value': expected a number, but got a string instead.", 'actions.on_fail.feedback.value', 'invalid_type'),
    ],
  ])('%s: 400 with the exact envelope', async (_name, body, expected) => {
    const res = await t.request('POST', '/v1/guardrails', { body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(expected);
  });

  it('an unknown workspace_id is a 404', async () => {
    const res = await t.request('POST', '/v1/guardrails', { body: { name: 'x', checks: [jwtCheck], workspace_id: 'nowhere' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { message: "Workspace not found: 'nowhere'.", type: 'invalid_request_error', param: 'workspace_id', code: 'workspace_not_found' } });
  });
});

describe('PUT /v1/guardrails/{guardrailId}', () => {
  it('two updates make three versions; the record shows the latest; old versions are kept', async () => {
    const created = await create({ name: 'Versioned', checks: [jwtCheck], actions: fullActions });
    clock.advance(60_000);
    const t1 = clock.now().toISOString();
    const first = await t.request('PUT', `/v1/guardrails/${created.id}`, { body: { name: 'Versioned v2' } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ id: created.id, slug: created.slug, version_id: expect.any(String) });
    expect(first.body.version_id).toMatch(UUID);
    expect(first.body.version_id).not.toBe(created.version_id);

    clock.advance(60_000);
    const t2 = clock.now().toISOString();
    // By slug; omitted action fields take the defaults (not the previous values).
    const second = await t.request('PUT', `/v1/guardrails/${created.slug}`, {
      body: { checks: [{ id: 'default.contains', parameters: { words: ['hello'], operator: 'any' } }], actions: { async: true, on_fail: { feedback: { metadata: 'x' } } } },
    });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ id: created.id, slug: created.slug, version_id: expect.any(String) });
    expect(new Set([created.version_id, first.body.version_id, second.body.version_id]).size).toBe(3);

    const record = await t.request('GET', `/v1/guardrails/${created.id}`);
    expect(record.status).toBe(200);
    const latestChecks = [{ id: 'default.contains', is_enabled: true, parameters: { words: ['hello'], operator: 'any' } }];
    const latestActions = {
      deny: false,
      async: true,
      on_success: { feedback: { value: 5, weight: 1, metadata: '' } },
      on_fail: { feedback: { value: -5, weight: 1, metadata: 'x' } },
    };
    expect(record.body).toEqual({
      id: created.id,
      name: 'Versioned v2',
      slug: created.slug,
      organisation_id: orgId,
      workspace_id: null,
      status: 'active',
      created_at: expect.any(String),
      last_updated_at: t2,
      owner_id: keyId,
      updated_by: keyId,
      checks: latestChecks,
      actions: latestActions,
    });

    const versions = await t.graphql(
      `query($id: String!) { guardrailVersions(guardrailId: $id) { id guardrailId version name createdBy createdAt checks { id name isEnabled parameters } actions { deny async onSuccess { feedback { value weight metadata } } onFail { feedback { value weight metadata } } } } }`,
      { id: created.slug },
    );
    expect(versions.errors).toBeUndefined();
    const v1Checks = [{ id: 'default.jwt', name: 'JWT', isEnabled: true, parameters: jwtCheck.parameters }];
    const gqlActions = (a: typeof fullActions) => ({ deny: a.deny, async: a.async, onSuccess: a.on_success, onFail: a.on_fail });
    expect(versions.data.guardrailVersions).toEqual([
      { id: created.version_id, guardrailId: created.id, version: 1, name: 'Versioned', createdBy: keyId, createdAt: record.body.created_at, checks: v1Checks, actions: gqlActions(fullActions) },
      { id: first.body.version_id, guardrailId: created.id, version: 2, name: 'Versioned v2', createdBy: keyId, createdAt: t1, checks: v1Checks, actions: gqlActions(fullActions) },
      {
        id: second.body.version_id,
        guardrailId: created.id,
        version: 3,
        name: 'Versioned v2',
        createdBy: keyId,
        createdAt: t2,
        checks: [{ id: 'default.contains', name: null, isEnabled: true, parameters: latestChecks[0]!.parameters }],
        actions: gqlActions(latestActions),
      },
    ]);
  });

  it('concurrent updates each get their own version number', async () => {
    const created = await create({ name: 'Busy', checks: [jwtCheck] });
    const results = await Promise.all([1, 2, 3, 4].map((n) => t.request('PUT', `/v1/guardrails/${created.id}`, { body: { name: `Busy ${n}` } })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const versions = await t.graphql(`{ guardrailVersions(guardrailId: "${created.id}") { version id } }`);
    expect(versions.data.guardrailVersions.map((v: { version: number }) => v.version)).toEqual([1, 2, 3, 4, 5]);
    expect(await currentVersionId(created.id)).toBe(versions.data.guardrailVersions[4].id);
  });

  it('the portkey-ai SDK adds workspace_id and drops guardrail_id: both are ignored', async () => {
    const created = await create({ name: 'Sdk-ish', checks: [jwtCheck] });
    const res = await t.request('PUT', `/v1/guardrails/${created.id}`, { body: { name: 'renamed', workspace_id: 'whatever' } });
    expect(res.status).toBe(200);
  });

  it.each([
    ['nothing to change', {}, badRequest("Nothing to update: send at least one of 'name', 'checks', 'actions'.", null, 'missing_required_parameter')],
    ['empty checks', { checks: [] }, badRequest('Invalid checks: must contain at least one check.', 'checks', 'invalid_value')],
    [
      'unknown check id',
      { checks: [{ id: 'portkey.pii' }] },
      badRequest(
        'Invalid checks[0].id: unknown check "portkey.pii". Known checks: default.jwt, default.regexMatch, default.wordCount, default.sentenceCount, default.characterCount, default.contains, default.endsWith, default.jsonSchema, default.jsonKeys, default.validUrls, default.alluppercase, default.isAllLowerCase, default.modelWhitelist, default.requiredMetadataKeys.',
        'checks[0].id',
        'invalid_value',
      ),
    ],
    [
      'bad jwt parameter',
      { checks: [{ id: 'default.jwt', parameters: { jwksUri: 'ftp://x.test/jwks', headerKey: 'Authorization' } }] },
      badRequest('Invalid checks[0].parameters.jwksUri: must be an absolute http or https URL.', 'checks[0].parameters.jwksUri', 'invalid_value'),
    ],
    [
      'disallowed jwt algorithm',
      { checks: [{ ...jwtCheck, parameters: { ...jwtCheck.parameters, algorithms: ['HS256'] } }] },
      badRequest(
        'Invalid checks[0].parameters.algorithms[0]: must be one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA, Ed25519.',
        'checks[0].parameters.algorithms[0]',
        'invalid_value',
      ),
    ],
    [
      'uncompilable regex',
      { checks: [{ id: 'default.regexMatch', parameters: { rule: '[z-a]' } }] },
      badRequest(
        'Invalid checks[0].parameters.rule: is not a valid regular expression: Invalid regular expression: /[z-a]/: Range out of order in character class.',
        'checks[0].parameters.rule',
        'invalid_value',
      ),
    ],
    ['checks not an array', { checks: { id: 'default.jwt' } }, badRequest("Invalid type for 'checks': expected an array, but got an object instead.", 'checks', 'invalid_type')],
  ])('%s: 400, and no new version', async (_name, body, expected) => {
    const created = await create({ name: 'Target', checks: [jwtCheck] });
    const res = await t.request('PUT', `/v1/guardrails/${created.id}`, { body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(expected);
    expect(await currentVersionId(created.id)).toBe(created.version_id);
  });

  it('unknown id or slug: 404', async () => {
    const byId = await t.request('PUT', '/v1/guardrails/00000000-0000-4000-8000-000000000000', { body: { name: 'x' } });
    expect(byId.status).toBe(404);
    expect(byId.body).toEqual(notFound('00000000-0000-4000-8000-000000000000'));
    const bySlug = await t.request('PUT', '/v1/guardrails/guard_doesnotexist', { body: { name: 'x' } });
    expect(bySlug.status).toBe(404);
    expect(bySlug.body).toEqual(notFound('guard_doesnotexist'));
  });
});

describe('GET /v1/guardrails', () => {
  it('lists {data, total}, newest first, with paging, workspace and status filters', async () => {
    const fresh = await createTestApp({}, { clock: new ManualClock(new Date(T0)) });
    try {
      const c = fresh.app.runtime.clock as ManualClock;
      const ids: string[] = [];
      for (const n of [1, 2, 3]) {
        c.advance(1000);
        const res = await fresh.request('POST', '/v1/guardrails', { body: { name: `G${n}`, checks: [jwtCheck] } });
        ids.push(res.body.id);
      }
      const ws = await fresh.request('POST', '/v1/admin/workspaces', { body: { name: 'Team' } });
      c.advance(1000);
      const inWs = await fresh.request('POST', '/v1/guardrails', { body: { name: 'G4', checks: [jwtCheck], workspace_id: ws.body.id } });
      const viewer = await fresh.graphql('{ viewer { organisation { id } apiKey { id } } }');
      const owner = viewer.data.viewer.apiKey.id;

      const all = await fresh.request('GET', '/v1/guardrails');
      expect(all.status).toBe(200);
      expect(all.body.total).toBe(4);
      expect(all.body.data.map((g: { name: string }) => g.name)).toEqual(['G4', 'G3', 'G2', 'G1']);
      expect(all.body.data[0]).toEqual({
        id: inWs.body.id,
        name: 'G4',
        slug: inWs.body.slug,
        organisation_id: viewer.data.viewer.organisation.id,
        workspace_id: ws.body.id,
        status: 'active',
        created_at: '2031-03-01T09:00:04.000Z',
        last_updated_at: '2031-03-01T09:00:04.000Z',
        owner_id: owner,
        updated_by: owner,
      });

      const page = await fresh.request('GET', '/v1/guardrails?page_size=2&current_page=1');
      expect(page.body).toEqual({ data: [expect.objectContaining({ name: 'G2' }), expect.objectContaining({ name: 'G1' })], total: 4 });
      const beyond = await fresh.request('GET', '/v1/guardrails?page_size=2&current_page=5');
      expect(beyond.body).toEqual({ data: [], total: 4 });
      const zero = await fresh.request('GET', '/v1/guardrails?page_size=0');
      expect(zero.body).toEqual({ data: [], total: 4 });

      const filtered = await fresh.request('GET', `/v1/guardrails?workspace_id=${ws.body.slug}`);
      expect(filtered.body).toEqual({ data: [expect.objectContaining({ id: inWs.body.id })], total: 1 });

      await fresh.request('DELETE', `/v1/guardrails/${ids[0]}`);
      const active = await fresh.request('GET', '/v1/guardrails');
      expect(active.body.total).toBe(3);
      const archived = await fresh.request('GET', '/v1/guardrails?status=archived');
      expect(archived.body).toEqual({ data: [expect.objectContaining({ id: ids[0], status: 'archived' })], total: 1 });
    } finally {
      await fresh.close();
    }
  });

  it.each([
    ['page_size=abc', badRequest("Invalid type for 'page_size': expected an integer, but got 'abc' instead.", 'page_size', 'invalid_type')],
    ['page_size=1001', badRequest("Invalid value for 'page_size': expected an integer from 0 to 1000.", 'page_size', 'invalid_value')],
    ['current_page=-1', badRequest("Invalid value for 'current_page': expected an integer greater than or equal to 0.", 'current_page', 'invalid_value')],
    [
      'status=deleted',
      badRequest("Invalid value for query parameter 'status': Invalid enum value. Expected 'active' | 'archived', received 'deleted'", 'status', 'invalid_value'),
    ],
  ])('%s: 400', async (query, expected) => {
    const res = await t.request('GET', `/v1/guardrails?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(expected);
  });

  it('an unknown workspace_id filter: 404', async () => {
    const res = await t.request('GET', '/v1/guardrails?workspace_id=nowhere');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('workspace_not_found');
  });
});

describe('GET /v1/guardrails/{guardrailId}', () => {
  it('by id (any case) and by slug give the same record', async () => {
    const created = await create({ name: 'Same', checks: [jwtCheck], actions: fullActions });
    const byId = await t.request('GET', `/v1/guardrails/${created.id.toUpperCase()}`);
    const bySlug = await t.request('GET', `/v1/guardrails/${created.slug}`);
    expect(byId.status).toBe(200);
    expect(bySlug.body).toEqual(byId.body);
    expect(byId.body.checks).toEqual([jwtCheck]);
    expect(byId.body.actions).toEqual(fullActions);
  });

  it('unknown: 404', async () => {
    const res = await t.request('GET', '/v1/guardrails/guard_nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual(notFound('guard_nope'));
  });
});

describe('DELETE /v1/guardrails/{guardrailId}', () => {
  it('archives: 200 {} (a JSON body is tolerated); the record stays readable; updates are refused; repeating is harmless', async () => {
    const created = await create({ name: 'Doomed', checks: [jwtCheck] });
    clock.advance(1000);
    const res = await t.request('DELETE', `/v1/guardrails/${created.id}`, { body: { guardrail_id: created.id } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({});
    const record = await t.request('GET', `/v1/guardrails/${created.slug}`);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ status: 'archived', last_updated_at: clock.now().toISOString() });
    expect(await currentVersionId(created.slug)).toBe(created.version_id);
    const update = await t.request('PUT', `/v1/guardrails/${created.id}`, { body: { name: 'back' } });
    expect(update.status).toBe(400);
    expect(update.body).toEqual(badRequest(`Guardrail '${created.slug}' is archived and cannot be updated.`, 'guardrail_id', 'guardrail_archived'));
    const again = await t.request('DELETE', `/v1/guardrails/${created.slug}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({});
  });

  it('without a body, and unknown: 404', async () => {
    const res = await t.request('DELETE', '/v1/guardrails/guard_unknown');
    expect(res.status).toBe(404);
    expect(res.body).toEqual(notFound('guard_unknown'));
  });
});

describe('tenancy: invisible guardrails do not exist', () => {
  it("another organisation's guardrail: 404 on every route, the same body as never created", async () => {
    const ours = await create({ name: 'Ours', checks: [jwtCheck] });
    const other = await createOtherOrganisation(t, 'Guardrail rivals');
    for (const ref of [ours.id, ours.slug]) {
      const get = await t.request('GET', `/v1/guardrails/${ref}`, { key: other.key });
      expect(get.status).toBe(404);
      expect(get.body).toEqual(notFound(ref));
      const put = await t.request('PUT', `/v1/guardrails/${ref}`, { key: other.key, body: { name: 'stolen' } });
      expect(put.status).toBe(404);
      expect(put.body).toEqual(notFound(ref));
      const del = await t.request('DELETE', `/v1/guardrails/${ref}`, { key: other.key });
      expect(del.status).toBe(404);
      expect(del.body).toEqual(notFound(ref));
    }
    const list = await t.request('GET', '/v1/guardrails', { key: other.key });
    expect(list.body).toEqual({ data: [], total: 0 });
    const gql = await t.graphql(`{ guardrailVersions(guardrailId: "${ours.id}") { id } }`, {}, other.key);
    expect(gql.errors?.[0].message).toBe(`Guardrail not found: '${ours.id}'.`);
    expect((await t.request('GET', `/v1/guardrails/${ours.id}`)).body.name).toBe('Ours');
  });

  it("a workspace key: its own workspace's and organisation-wide guardrails only; may not change organisation-wide ones", async () => {
    const a = await createWorkspaceWithKey(t, 'Guard A');
    const b = await createWorkspaceWithKey(t, 'Guard B');
    const inA = await create({ name: 'A only', checks: [jwtCheck] }, a.key);
    const inB = await create({ name: 'B only', checks: [jwtCheck], workspace_id: b.workspaceId });
    const orgWide = await create({ name: 'Everyone', checks: [jwtCheck] });

    expect((await t.request('GET', `/v1/guardrails/${inA.id}`, { key: a.key })).body.workspace_id).toBe(a.workspaceId);
    const hidden = await t.request('GET', `/v1/guardrails/${inB.slug}`, { key: a.key });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(notFound(inB.slug));
    expect((await t.request('PUT', `/v1/guardrails/${inB.id}`, { key: a.key, body: { name: 'x' } })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/guardrails/${inB.id}`, { key: a.key })).status).toBe(404);
    const intoB = await t.request('POST', '/v1/guardrails', { key: a.key, body: { name: 'x', checks: [jwtCheck], workspace_id: b.workspaceId } });
    expect(intoB.status).toBe(404);
    expect(intoB.body.error.code).toBe('workspace_not_found');

    const list = await t.request('GET', '/v1/guardrails?page_size=1000', { key: a.key });
    const names = list.body.data.map((g: { name: string }) => g.name);
    expect(names).toContain('A only');
    expect(names).toContain('Everyone');
    expect(names).not.toContain('B only');
    expect(list.body.data.every((g: { workspace_id: string | null }) => g.workspace_id === null || g.workspace_id === a.workspaceId)).toBe(true);

    expect((await t.request('GET', `/v1/guardrails/${orgWide.id}`, { key: a.key })).status).toBe(200);
    const change = await t.request('PUT', `/v1/guardrails/${orgWide.id}`, { key: a.key, body: { name: 'mine now' } });
    expect(change.status).toBe(403);
    expect(change.body).toEqual({
      error: {
        message: 'This operation needs an organisation API key.',
        type: 'permission_error',
        param: null,
        code: 'permission_denied',
      },
    });
    expect((await t.request('DELETE', `/v1/guardrails/${orgWide.id}`, { key: a.key })).status).toBe(403);
    expect((await t.request('PUT', `/v1/guardrails/${inA.id}`, { key: a.key, body: { name: 'A renamed' } })).status).toBe(200);
  });
});
