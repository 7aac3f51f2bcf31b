import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextOf } from '../../../src/http/request-context.js';
import { createTestApp, TEST_KEY, type TestApp } from '../../helpers/app.js';

describe('request context', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('is let go once the response is finished, over REST and /graphql alike (its forked EntityManager goes with it)', async () => {
    const rest = new Request('http://gateway/v1/admin/workspaces/default', { headers: { 'x-gateway-api-key': TEST_KEY } });
    const graphql = new Request('http://gateway/graphql', {
      method: 'POST',
      headers: { 'x-gateway-api-key': TEST_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ workspace(idOrSlug: "default") { slug } }' }),
    });
    for (const request of [rest, graphql]) {
      const response = await t.app.fetch(request);
      expect(response.status).toBe(200);
      // The edge used the context to finish the answer (its request id), then let it go.
      expect(response.headers.get('x-gateway-request-id')).toBeTruthy();
      expect(contextOf(request)).toBeUndefined();
    }
  });
});
