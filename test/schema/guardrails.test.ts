import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createOtherOrganisation } from '../helpers/tenants.js';

const T0 = '2031-07-01T08:00:00.000Z';
let t: TestApp;
let clock: ManualClock;
let keyId: string;
let orgId: string;

beforeAll(async () => {
  clock = new ManualClock(new Date(T0));
  t = await createTestApp({}, { clock });
  const viewer = await t.graphql('{ viewer { organisation { id } apiKey { id } } }');
  keyId = viewer.data.viewer.apiKey.id;
  orgId = viewer.data.viewer.organisation.id;
});
afterAll(() => t.close());

const GUARDRAIL_FIELDS = `id slug name organisationId workspaceId status ownerId updatedBy versionId version createdAt updatedAt archivedAt
  checks { id name isEnabled parameters }
  actions { deny async onSuccess { feedback { value weight metadata } } onFail { feedback { value weight metadata } } }`;

const CREATE = `mutation($input: CreateGuardrailInput!) { createGuardrail(input: $input) { ${GUARDRAIL_FIELDS} } }`;
const UPDATE = `mutation($id: String!, $input: UpdateGuardrailInput!) { updateGuardrail(idOrSlug: $id, input: $input) { ${GUARDRAIL_FIELDS} } }`;

describe('GraphQL guardrails', () => {
  it('createGuardrail returns the whole record with defaults applied', async () => {
    const res = await t.graphql(CREATE, {
      input: {
        name: 'Regex',
        checks: [{ id: 'default.regexMatch', name: 'digits', parameters: { rule: '\\d+' } }],
        actions: { deny: true, onFail: { feedback: { value: -1 } } },
      },
    });
    expect(res.status).toBe(200);
    expect(res.errors).toBeUndefined();
    expect(res.data.createGuardrail).toEqual({
      id: expect.any(String),
      slug: expect.stringMatching(/^guard_[A-Za-z0-9]{24}$/),
      name: 'Regex',
      organisationId: orgId,
      workspaceId: null,
      status: 'active',
      ownerId: keyId,
      updatedBy: keyId,
      versionId: expect.any(String),
      version: 1,
      createdAt: T0,
      updatedAt: T0,
      archivedAt: null,
      checks: [{ id: 'default.regexMatch', name: 'digits', isEnabled: true, parameters: { rule: '\\d+', not: false } }],
      actions: {
        deny: true,
        async: false,
        onSuccess: { feedback: { value: 5, weight: 1, metadata: '' } },
        onFail: { feedback: { value: -1, weight: 1, metadata: '' } },
      },
    });
  });

  it('validation errors carry the wire param path in extensions', async () => {
    const res = await t.graphql(CREATE, { input: { name: 'bad', checks: [{ id: 'default.regexMatch', parameters: { rule: '(' } }] } });
    expect(res.data).toBeNull();
    expect(res.errors).toHaveLength(1);
    expect(res.errors![0].message).toBe('Invalid checks[0].parameters.rule: is not a valid regular expression: Invalid regular expression: /(/: Unterminated group.');
    expect(res.errors![0].extensions).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'checks[0].parameters.rule', code: 'invalid_value' });

    const empty = await t.graphql(CREATE, { input: { name: 'bad', checks: [] } });
    expect(empty.errors![0].extensions).toMatchObject({ status: 400, param: 'checks' });
  });

  it('updateGuardrail writes versions; guardrail, guardrails and guardrailVersions read them', async () => {
    clock.advance(1000);
    const created = (await t.graphql(CREATE, { input: { name: 'Counted', checks: [{ id: 'default.characterCount', parameters: { maxCharacters: 10 } }] } })).data.createGuardrail;
    clock.advance(5000);
    const renamed = await t.graphql(UPDATE, { id: created.slug, input: { name: 'Counted v2' } });
    expect(renamed.errors).toBeUndefined();
    expect(renamed.data.updateGuardrail).toMatchObject({ id: created.id, name: 'Counted v2', version: 2, updatedAt: new Date(Date.parse(T0) + 6000).toISOString(), checks: created.checks, actions: created.actions });
    const rechecked = await t.graphql(UPDATE, { id: created.id, input: { checks: [{ id: 'default.endsWith', isEnabled: false, parameters: { suffix: '.' } }], actions: { async: true } } });
    expect(rechecked.data.updateGuardrail).toMatchObject({
      version: 3,
      name: 'Counted v2',
      checks: [{ id: 'default.endsWith', name: null, isEnabled: false, parameters: { suffix: '.', not: false } }],
      actions: { deny: false, async: true },
    });

    const one = await t.graphql(`query($id: String!) { guardrail(idOrSlug: $id) { id version versionId } }`, { id: created.slug });
    expect(one.data.guardrail).toEqual({ id: created.id, version: 3, versionId: rechecked.data.updateGuardrail.versionId });

    const versions = await t.graphql(`query($id: String!) { guardrailVersions(guardrailId: $id) { id version name checks { id } } }`, { id: created.id });
    expect(versions.data.guardrailVersions).toEqual([
      { id: created.versionId, version: 1, name: 'Counted', checks: [{ id: 'default.characterCount' }] },
      { id: renamed.data.updateGuardrail.versionId, version: 2, name: 'Counted v2', checks: [{ id: 'default.characterCount' }] },
      { id: rechecked.data.updateGuardrail.versionId, version: 3, name: 'Counted v2', checks: [{ id: 'default.endsWith' }] },
    ]);

    const list = await t.graphql(`{ guardrails(pageSize: 1) { total data { name } } }`);
    expect(list.data.guardrails).toEqual({ total: 2, data: [{ name: 'Counted v2' }] });
  });

  it('deleteGuardrail archives; the list hides it unless asked; the record and its versions stay', async () => {
    const created = (await t.graphql(CREATE, { input: { name: 'Short-lived', checks: [{ id: 'default.alluppercase' }] } })).data.createGuardrail;
    const deleted = await t.graphql(`mutation($id: String!) { deleteGuardrail(idOrSlug: $id) { id status archivedAt } }`, { id: created.id });
    expect(deleted.data.deleteGuardrail).toEqual({ id: created.id, status: 'archived', archivedAt: clock.now().toISOString() });
    const active = await t.graphql(`{ guardrails { data { id } } }`);
    expect(active.data.guardrails.data.map((g: { id: string }) => g.id)).not.toContain(created.id);
    const archived = await t.graphql(`{ guardrails(status: archived) { total data { id status } } }`);
    expect(archived.data.guardrails).toEqual({ total: 1, data: [{ id: created.id, status: 'archived' }] });
    const versions = await t.graphql(`{ guardrailVersions(guardrailId: "${created.slug}") { version } }`);
    expect(versions.data.guardrailVersions).toEqual([{ version: 1 }]);
  });

  it('paging arguments are checked', async () => {
    const res = await t.graphql(`{ guardrails(pageSize: 5000) { total } }`);
    expect(res.errors![0].message).toBe("Invalid value for 'page_size': expected an integer from 0 to 1000.");
    expect(res.errors![0].extensions).toMatchObject({ status: 400, param: 'page_size' });
    const neg = await t.graphql(`{ guardrailEvaluations(currentPage: -1) { total } }`);
    expect(neg.errors![0].extensions).toMatchObject({ status: 400, param: 'current_page' });
  });

  it("another organisation sees none of it", async () => {
    const other = await createOtherOrganisation(t, 'GraphQL rivals');
    const list = await t.graphql(`{ guardrails { total } guardrailEvaluations { total } }`, {}, other.key);
    expect(list.data).toEqual({ guardrails: { total: 0 }, guardrailEvaluations: { total: 0 } });
    const ours = (await t.graphql(`{ guardrails { data { id } } }`)).data.guardrails.data[0].id;
    const one = await t.graphql(`{ guardrail(idOrSlug: "${ours}") { id } }`, {}, other.key);
    expect(one.errors![0]).toMatchObject({ message: `Guardrail not found: '${ours}'.`, extensions: { status: 404, code: 'guardrail_not_found' } });
    const update = await t.graphql(UPDATE, { id: ours, input: { name: 'x' } }, other.key);
    expect(update.errors![0].extensions).toMatchObject({ status: 404 });
  });
});
