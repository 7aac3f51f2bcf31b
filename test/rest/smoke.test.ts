import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

it('smoke', async () => {
  const r = await t.request('GET', '/v1/admin/workspaces');
  console.log(r.status, JSON.stringify(r.body));
  const g = await t.graphql('{ viewer { organisation { id name } workspaces { slug } apiKey { keyPrefix type } } }');
  console.log(g.status, JSON.stringify(g.body));
  const c = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Team A' } });
  console.log(c.status, JSON.stringify(c.body), c.headers.get('x-gateway-request-id'));
  expect(r.status).toBe(200);
});
