/**
 * src/http/front-door.ts answers REST requests without Yoga's server adapter: what that adapter did
 * for them must stay the same over node:http (CORS as /graphql answers it, the request id, a path
 * going where its parsed URL says) and in-process.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextOf } from '../../../src/http/request-context.js';
import { createTestApp, TEST_KEY, type TestApp } from '../../helpers/app.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  base = await t.listen();
});
afterAll(() => t.close());

/** A raw HTTP request (the path sent as it is, unlike fetch, which normalises it). */
function raw(method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, method, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-allow-credentials', 'vary', 'content-length'];
const corsOf = (headers: Record<string, string | string[] | undefined>) => Object.fromEntries(CORS_HEADERS.map((name) => [name, headers[name]]));

describe('front door', () => {
  it('answers a CORS preflight on a REST path as on /graphql: 204, the same CORS headers, a request id', async () => {
    const preflight = { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-gateway-api-key, content-type' };
    const rest = await raw('OPTIONS', '/v1/collections', preflight);
    const graphql = await raw('OPTIONS', '/graphql', preflight);
    expect(rest.status).toBe(204);
    expect(graphql.status).toBe(204);
    expect(corsOf(rest.headers)).toEqual(corsOf(graphql.headers));
    expect(rest.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(rest.headers['x-gateway-request-id']).toBeTruthy();
  });

  it('puts the same CORS headers on a REST answer as on a /graphql one, and none without an Origin', async () => {
    const headers = { origin: 'https://app.example', 'x-gateway-api-key': TEST_KEY };
    const rest = await raw('GET', '/v1/admin/workspaces/default', headers);
    const graphql = await raw('GET', `/graphql?query=${encodeURIComponent('{ __typename }')}`, headers);
    expect(rest.status).toBe(200);
    expect(graphql.status).toBe(200);
    const cors = (h: Record<string, string | string[] | undefined>) => ({ origin: h['access-control-allow-origin'], credentials: h['access-control-allow-credentials'], vary: h.vary });
    expect(cors(rest.headers)).toEqual(cors(graphql.headers));
    expect(rest.headers['access-control-allow-origin']).toBe('https://app.example');
    const plain = await raw('GET', '/v1/admin/workspaces/default', { 'x-gateway-api-key': TEST_KEY });
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('sends a path where its parsed URL goes: dot segments into and out of /v1', async () => {
    const intoRest = await raw('GET', '/graphql/../v1/admin/workspaces/default', { 'x-gateway-api-key': TEST_KEY });
    expect(intoRest.status).toBe(200);
    expect(JSON.parse(intoRest.body)).toMatchObject({ slug: 'default' });
    const encoded = await raw('GET', '/x/%2e%2e/v1/admin/workspaces/default', { 'x-gateway-api-key': TEST_KEY });
    expect(encoded.status).toBe(200);
    const outOfRest = await raw('GET', `/v1/../graphql?query=${encodeURIComponent('{ __typename }')}`, { 'x-gateway-api-key': TEST_KEY });
    expect(outOfRest.status).toBe(200);
    expect(JSON.parse(outOfRest.body)).toEqual({ data: { __typename: 'Query' } });
  });

  it('answers REST over node:http with the request id, the length and the context let go, as in-process', async () => {
    const over = await raw('GET', '/v1/admin/workspaces/default', { 'x-gateway-api-key': TEST_KEY, 'x-gateway-request-id': 'caller-id-1' });
    expect(over.headers['x-gateway-request-id']).toBe('caller-id-1');
    expect(Number(over.headers['content-length'])).toBe(Buffer.byteLength(over.body));
    const request = new Request('http://gateway/v1/admin/workspaces/default', { headers: { 'x-gateway-api-key': TEST_KEY } });
    const inProcess = await t.app.fetch(request);
    expect(await inProcess.text()).toBe(over.body);
    expect(contextOf(request)).toBeUndefined();
  });
});
