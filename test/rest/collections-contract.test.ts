/**
 * Collections' inputs are one contract per operation: REST and GraphQL refuse the same input with
 * the same message, param and code, because both parse it with the same schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const CREATE = 'mutation($input: CreateCollectionInput!) { createCollection(input: $input) { id } }';

describe('both front doors, one contract', () => {
  it.each([
    [{}, "Missing required parameter: 'name'.", 'name', 'missing_required_parameter'],
    [{ name: 5 }, "Invalid type for 'name': expected a string, but got an integer instead.", 'name', 'invalid_type'],
    [{ name: 'x', parent_collection_id: true }, "Invalid type for 'parent_collection_id': expected a string, but got a boolean instead.", 'parent_collection_id', 'invalid_type'],
  ])('create %j', async (body, message, param, code) => {
    const rest = await t.request('POST', '/v1/collections', { body });
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual({ error: { message, type: 'invalid_request_error', param, code } });
    // The same input in GraphQL terms: JSON-typed fields are not involved, so only valid GraphQL
    // types reach the contract; a missing name is the contract's refusal there too.
    if (Object.keys(body).length === 0) {
      const gql = await t.graphql(CREATE, { input: {} });
      expect(gql.errors?.[0]).toMatchObject({ message, extensions: { status: 400, param, code } });
    }
  });

  it('rename without a name: the same 400 over REST and GraphQL', async () => {
    const created = await t.request('POST', '/v1/collections', { body: { name: 'Contract' } });
    const rest = await t.request('PUT', `/v1/collections/${created.body.id}`, { body: {} });
    expect(rest.body.error).toMatchObject({ message: "Missing required parameter: 'name'.", param: 'name' });
    const gql = await t.graphql('mutation($id: String!) { updateCollection(collectionId: $id, input: {}) { id } }', { id: created.body.id });
    expect(gql.errors?.[0]).toMatchObject({ message: "Missing required parameter: 'name'.", extensions: { status: 400, param: 'name' } });
  });
});
