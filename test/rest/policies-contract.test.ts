/**
 * Usage-limit policies' inputs are one contract per operation: REST and GraphQL refuse the same
 * input with the same message, param and code, because both parse it with the same schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectBothDoors } from '../helpers/both-doors.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const BASE = '/v1/policies/usage-limits';
const CREATE = 'mutation($input: CreateUsageLimitsPolicyInput!) { createUsageLimitsPolicy(input: $input) { id } }';
const UPDATE = 'mutation($id: ID!, $input: UpdateUsageLimitsPolicyInput!) { updateUsageLimitsPolicy(id: $id, input: $input) { id } }';
const wire = { conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }], type: 'tokens', credit_limit: 100 };
const graphql = { conditions: [{ key: 'workspace_id', value: '*' }], groupBy: [{ key: 'api_key' }], type: 'tokens', creditLimit: 100 };

describe('both front doors, one contract', () => {
  it.each([
    [{ conditions: undefined }, { conditions: undefined }, "Missing required parameter: 'conditions'.", 'conditions', 'missing_required_parameter'],
    [{ conditions: [] }, { conditions: [] }, 'conditions must have at least one item.', 'conditions', 'invalid_value'],
    [{ conditions: [{ value: 'x' }] }, { conditions: [{ value: 'x' }] }, "Missing required parameter: 'conditions[0].key'.", 'conditions[0].key', 'missing_required_parameter'],
    [
      { conditions: [{ key: 'model', value: 'a' }, { key: 'model', value: 'b' }] },
      { conditions: [{ key: 'model', value: 'a' }, { key: 'model', value: 'b' }] },
      "Duplicate key 'model' in conditions.",
      'conditions[1].key',
      'invalid_value',
    ],
    [{ group_by: [{ key: 'metadata.' }] }, { groupBy: [{ key: 'metadata.' }] }, "'metadata.' needs a metadata name after 'metadata.'.", 'group_by[0].key', 'invalid_value'],
    [{ type: 'dollars' }, { type: 'dollars' }, "Invalid value for 'type': must be one of 'cost', 'tokens'.", 'type', 'invalid_value'],
    [{ credit_limit: undefined }, { creditLimit: undefined }, "Missing required parameter: 'credit_limit'.", 'credit_limit', 'missing_required_parameter'],
    [{ periodic_reset: 'daily' }, { periodicReset: 'daily' }, "Invalid value for 'periodic_reset': must be one of 'monthly', 'weekly'.", 'periodic_reset', 'invalid_value'],
    [{ workspace_id: '' }, { workspaceId: '' }, "'workspace_id' must be a workspace id or slug.", 'workspace_id', 'invalid_value'],
    [{ alert_threshold: 100 }, { alertThreshold: 100 }, 'alert_threshold must be less than credit_limit.', 'alert_threshold', 'invalid_value'],
  ])('create %j', async (restChange, gqlChange, message, param, code) => {
    await expectBothDoors(t.request('POST', BASE, { body: { ...wire, ...restChange } }), t.graphql(CREATE, { input: { ...graphql, ...gqlChange } }), message, param, code);
  });

  it.each([
    [{ credit_limit: null }, { creditLimit: null }, "Invalid type for 'credit_limit': expected a number, but got null instead.", 'credit_limit', 'invalid_type'],
    [{ name: null }, { name: null }, "Invalid type for 'name': expected a string, but got null instead.", 'name', 'invalid_type'],
    [
      { reset_usage_for_value: '' },
      { resetUsageForValue: '' },
      "'reset_usage_for_value' must be a non-empty value key (e.g. 'api_key:<id>').",
      'reset_usage_for_value',
      'invalid_value',
    ],
    [{ periodic_reset: 'yearly' }, { periodicReset: 'yearly' }, "Invalid value for 'periodic_reset': must be one of 'monthly', 'weekly'.", 'periodic_reset', 'invalid_value'],
  ])('update %j', async (restChange, gqlChange, message, param, code) => {
    const created = await t.request('POST', BASE, { body: wire });
    expect(created.status).toBe(200);
    const id = created.body.id;
    await expectBothDoors(t.request('PUT', `${BASE}/${id}`, { body: restChange }), t.graphql(UPDATE, { id, input: gqlChange }), message, param, code);
  });

  it('lists: a blank workspace filter is refused as create refuses it, on both doors', async () => {
    await expectBothDoors(
      t.request('GET', `${BASE}?workspace_id=%20`),
      t.graphql('query($ws: String) { usageLimitsPolicies(workspaceId: $ws) { total } }', { ws: ' ' }),
      "'workspace_id' must be a workspace id or slug.",
      'workspace_id',
      'invalid_value',
    );
  });
});
