/**
 * Guardrails' inputs are one contract per operation: REST and GraphQL refuse the same input with
 * the same message, param and code, because both parse it with the same schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectBothDoors } from '../helpers/both-doors.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const CREATE = 'mutation($input: CreateGuardrailInput!) { createGuardrail(input: $input) { id } }';
const UPDATE = 'mutation($id: String!, $input: UpdateGuardrailInput!) { updateGuardrail(idOrSlug: $id, input: $input) { id } }';
const check = { id: 'default.alluppercase' };

describe('both front doors, one contract', () => {
  it.each([
    [{ checks: [check] }, { checks: [check] }, "Missing required parameter: 'name'.", 'name', 'missing_required_parameter'],
    [{ name: 'x' }, { name: 'x' }, "Missing required parameter: 'checks'.", 'checks', 'missing_required_parameter'],
    [{ name: 'x', checks: [] }, { name: 'x', checks: [] }, 'Invalid checks: must contain at least one check.', 'checks', 'invalid_value'],
    [{ name: 'x', checks: [{ parameters: {} }] }, { name: 'x', checks: [{ parameters: {} }] }, "Missing required parameter: 'checks[0].id'.", 'checks[0].id', 'missing_required_parameter'],
    [
      { name: 'x', checks: [check, { id: 'default.regexMatch', parameters: { rule: '(' } }] },
      { name: 'x', checks: [check, { id: 'default.regexMatch', parameters: { rule: '(' } }] },
      'Invalid checks[1].parameters.rule: is not a valid regular expression: Invalid regular expression: /(/: Unterminated group.',
      'checks[1].parameters.rule',
      'invalid_value',
    ],
  ])('create %j', async (restBody, gqlInput, message, param, code) => {
    await expectBothDoors(t.request('POST', '/v1/guardrails', { body: restBody }), t.graphql(CREATE, { input: gqlInput }), message, param, code);
  });

  it('update: an unknown check id is the same 400 over REST and GraphQL', async () => {
    const created = await t.request('POST', '/v1/guardrails', { body: { name: 'Contract', checks: [check] } });
    expect(created.status).toBe(200);
    const checks = [{ id: 'portkey.pii' }];
    const message = `Invalid checks[0].id: unknown check "portkey.pii". Known checks: ${'default.jwt, default.regexMatch, default.wordCount, default.sentenceCount, default.characterCount, default.contains, default.endsWith, default.jsonSchema, default.jsonKeys, default.validUrls, default.alluppercase, default.isAllLowerCase, default.modelWhitelist, default.requiredMetadataKeys'}.`;
    await expectBothDoors(t.request('PUT', `/v1/guardrails/${created.body.id}`, { body: { checks } }), t.graphql(UPDATE, { id: created.body.id, input: { checks } }), message, 'checks[0].id', 'invalid_value');
  });
});
