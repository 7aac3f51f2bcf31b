import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ GRAPHQL_MAX_DEPTH: 2, GRAPHQL_MAX_ALIASES: 3 });
});
afterAll(() => t.close());

describe('operations endpoints', () => {
  it('healthz and readyz answer without a key', async () => {
    expect(await t.request('GET', '/healthz', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await t.request('GET', '/readyz', { key: null })).toMatchObject({ status: 200, body: { status: 'ok', database: 'ok' } });
  });

  it('readyz says 503 when the database is gone', async () => {
    const other = await createTestApp();
    await other.app.runtime.orm.close(true);
    const res = await other.request('GET', '/readyz', { key: null });
    expect(res).toMatchObject({ status: 503, body: { status: 'unavailable', database: 'unreachable' } });
  });

  it('metrics count requests by route, method and status', async () => {
    await t.request('GET', '/v1/admin/workspaces');
    await t.request('GET', '/v1/admin/workspaces', { key: null });
    const res = await t.request('GET', '/metrics', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toContain('gatehouse_http_requests_total{route="/v1/admin/workspaces",method="GET",status="200"} 1');
    expect(res.text).toContain('gatehouse_http_requests_total{route="/v1/admin/workspaces",method="GET",status="401"} 1');
    expect(res.text).toContain('gatehouse_http_request_duration_seconds_bucket');
  });

  it('metrics can be protected with METRICS_TOKEN', async () => {
    const locked = await createTestApp({ METRICS_TOKEN: 'scrape-me' });
    try {
      const refused = await locked.request('GET', '/metrics', { key: null });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({
        error: { message: 'Metrics need Authorization: Bearer <METRICS_TOKEN>.', type: 'authentication_error', param: null, code: 'invalid_metrics_token' },
      });
      expect((await locked.request('GET', '/metrics', { key: null, headers: { authorization: 'Bearer scrape-me' } })).status).toBe(200);
    } finally {
      await locked.close();
    }
  });
});

describe('GraphQL protection', () => {
  it('refuses queries deeper than GRAPHQL_MAX_DEPTH', async () => {
    const shallow = await t.graphql('{ workspaces { id } }');
    expect(shallow.errors).toBeUndefined();
    const tooDeep = await t.graphql('{ viewer { organisation { id } } }');
    expect(tooDeep.errors?.[0].message).toMatch(/depth/i);
  });

  it('refuses too many aliases', async () => {
    const res = await t.graphql('{ a: workspaces { id } b: workspaces { id } c: workspaces { id } d: workspaces { id } }');
    expect(res.errors?.[0].message).toMatch(/alias/i);
  });
});

describe('GraphQL request errors are the caller’s', () => {
  it('a variable of the wrong type or an unknown enum value is a 400, not a masked 500', async () => {
    const wrongType = await t.graphql('mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id } }', { i: { name: 5 } });
    expect(wrongType.errors?.[0].extensions).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(wrongType.errors?.[0].message).not.toMatch(/Internal server error/);
    const badEnum = await t.graphql('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }', { i: { name: 'x', type: 'dollars' } });
    expect(badEnum.errors?.[0].extensions).toMatchObject({ status: 400 });
    // With Accept: application/json, GraphQL-over-HTTP answers document errors with 200 and `errors`.
    const unknownField = await t.graphql('{ nope }');
    expect(unknownField.errors?.[0].message).toMatch(/Cannot query field "nope"/);
  });
});
