/**
 * Providers' inputs are one contract per operation: REST and GraphQL refuse the same input with
 * the same message, param and code, because both parse it with the same schema.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectBothDoors } from '../helpers/both-doors.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const CREATE = 'mutation($input: CreateProviderInput!) { createProvider(input: $input) { id } }';
const UPDATE = 'mutation($slug: String!, $input: UpdateProviderInput!) { updateProvider(slug: $slug, input: $input) { id } }';
const tooMany = Array.from({ length: 51 }, (_, i) => `g${i}`);

describe('both front doors, one contract', () => {
  it.each([
    [{}, {}, "Missing required parameter: 'integration_id'.", 'integration_id', 'missing_required_parameter'],
    [
      { integration_id: 'local', output_guardrails: ['ok', ' '] },
      { integrationId: 'local', outputGuardrails: ['ok', ' '] },
      "'output_guardrails[1]' must be a guardrail id or slug (1–255 characters).",
      'output_guardrails[1]',
      'invalid_value',
    ],
    [{ integration_id: 'local', input_guardrails: tooMany }, { integrationId: 'local', inputGuardrails: tooMany }, "'input_guardrails' holds at most 50 guardrails.", 'input_guardrails', 'invalid_value'],
    [{ integration_id: 'local', note: 'n'.repeat(2001) }, { integrationId: 'local', note: 'n'.repeat(2001) }, "'note' must be at most 2000 characters.", 'note', 'invalid_value'],
  ])('create %#', async (restBody, gqlInput, message, param, code) => {
    await expectBothDoors(t.request('POST', '/v1/providers', { body: restBody }), t.graphql(CREATE, { input: gqlInput }), message, param, code);
  });

  it('update: the same refusal of a blank guardrail reference', async () => {
    const message = "'input_guardrails[0]' must be a guardrail id or slug (1–255 characters).";
    await expectBothDoors(
      t.request('PUT', '/v1/providers/local', { body: { input_guardrails: [''] } }),
      t.graphql(UPDATE, { slug: 'local', input: { inputGuardrails: [''] } }),
      message,
      'input_guardrails[0]',
      'invalid_value',
    );
  });
});
