import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import {
  AppError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  GuardrailDeniedError,
  InternalError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionError,
  RateLimitError,
  UnsupportedMediaTypeError,
  UsageLimitError,
} from '../../src/errors.js';
import { createLogger } from '../../src/lib/logger.js';
import { graphQLErrorResponse } from '../../rest/errors.js';
import { maskError } from '../../schema/errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const silent = createLogger('silent');

describe('every error class has its documented status and type (docs/contract.md#errors)', () => {
  const table: Array<[AppError, number, string, string | null]> = [
    [new BadRequestError('bad', { param: 'x', code: 'invalid_value' }), 400, 'invalid_request_error', 'invalid_value'],
    [new AuthenticationError('Invalid API key.'), 401, 'authentication_error', 'invalid_api_key'],
    [new PermissionError('no', { code: 'integration_disabled' }), 403, 'permission_error', 'integration_disabled'],
    [new NotFoundError('Collection not found.'), 404, 'invalid_request_error', null],
    [new MethodNotAllowedError('PATCH', '/v1/x', ['GET']), 405, 'invalid_request_error', 'method_not_allowed'],
    [new ConflictError('taken'), 409, 'invalid_request_error', 'conflict'],
    [new UsageLimitError('spent'), 412, 'usage_limit_error', 'usage_limit_exceeded'],
    [new PayloadTooLargeError(10), 413, 'invalid_request_error', 'payload_too_large'],
    [new UnsupportedMediaTypeError(), 415, 'invalid_request_error', 'unsupported_media_type'],
    [new RateLimitError('slow down', { headers: { 'retry-after': '7' } }), 429, 'rate_limit_error', 'rate_limit_exceeded'],
    [new GuardrailDeniedError('denied', [{ verdict: false }]), 446, 'guardrail_error', 'guardrail_denied'],
    [new InternalError('req-1'), 500, 'server_error', null],
  ];

  it.each(table)('%s → %i %s', async (error, status, type, code) => {
    const response = graphQLErrorResponse(maskError(new GraphQLError(error.message, { originalError: error }), 'req-1', silent));
    expect(response.status).toBe(status);
    const body = await response.json();
    expect(body.error).toEqual({ message: error.message, type, param: error.param, code });
    expect(Object.keys(body.error)).toEqual(['message', 'type', 'param', 'code']);
  });

  it('carries headers and extra top-level keys through', async () => {
    const limited = graphQLErrorResponse(maskError(new RateLimitError('slow', { headers: { 'retry-after': '7' } }), 'r', silent));
    expect(limited.headers.get('retry-after')).toBe('7');
    const denied = graphQLErrorResponse(maskError(new GuardrailDeniedError('denied', [{ id: 'g1', verdict: false }]), 'r', silent));
    expect(await denied.json()).toEqual({
      error: { message: 'denied', type: 'guardrail_error', param: null, code: 'guardrail_denied' },
      guardrail_results: [{ id: 'g1', verdict: false }],
    });
  });

  it('masks anything else as a 500 naming only the request id, and logs it once with the stack', async () => {
    const lines: string[] = [];
    const logger = createLogger('error', new Writable({ write: (chunk, _e, cb) => (lines.push(String(chunk)), cb()) }));
    const response = graphQLErrorResponse(maskError(new Error('secret internals: table x'), 'req-42', logger));
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: { message: 'Internal server error (request req-42).', type: 'server_error', param: null, code: null },
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('secret internals');
    expect(JSON.parse(lines[0]).err.stack).toContain('Error: secret internals');
  });
});

describe('HTTP edge cases', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ BODY_LIMIT_BYTES: 200 });
  });
  afterAll(() => t.close());

  it('unknown /v1 path: 404', async () => {
    const res = await t.request('GET', '/v1/nothing/here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { message: 'Unknown request URL: GET /v1/nothing/here.', type: 'invalid_request_error', param: null, code: 'unknown_url' } });
  });

  it('unknown path outside /v1: 404 in the same envelope', async () => {
    const res = await t.request('GET', '/nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('unknown_url');
  });

  it('wrong method: 405 with Allow', async () => {
    const res = await t.request('PATCH', '/v1/admin/workspaces');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST');
    expect(res.body).toEqual({
      error: { message: 'Method PATCH is not allowed on /v1/admin/workspaces. Allowed: GET, POST.', type: 'invalid_request_error', param: null, code: 'method_not_allowed' },
    });
  });

  it('oversized body: 413', async () => {
    const res = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'x'.repeat(500) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: { message: 'Request body is larger than the limit of 200 bytes.', type: 'invalid_request_error', param: null, code: 'payload_too_large' } });
  });

  it('oversized body without a declared length (streamed): 413', async () => {
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('{"name":"' + 'y'.repeat(40) + '"}'));
        controller.close();
      },
    });
    const response = await t.app.fetch(
      new Request('http://gatehouse.test/v1/admin/workspaces', {
        method: 'POST',
        headers: { 'x-gateway-api-key': t.key, 'content-type': 'application/json' },
        body: chunks,
        duplex: 'half',
      } as RequestInit),
    );
    expect(response.status).toBe(413);
  });

  it('GraphQL: an oversized body without a declared length is a 413 too; a small one is served', async () => {
    const post = (text: string) =>
      t.app.fetch(
        new Request('http://gatehouse.test/graphql', {
          method: 'POST',
          headers: { 'x-gateway-api-key': t.key, 'content-type': 'application/json' },
          body: new ReadableStream({
            start(controller) {
              // Several chunks, no Content-Length: the body arrives chunked.
              for (const part of text.match(/.{1,40}/g)!) controller.enqueue(new TextEncoder().encode(part));
              controller.close();
            },
          }),
          duplex: 'half',
        } as RequestInit),
      );
    const big = await post(JSON.stringify({ query: `{ viewer { organisation { id } } } # ${'z'.repeat(300)}` }));
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({
      errors: [{ message: 'Request body is larger than the limit of 200 bytes.', extensions: { status: 413, type: 'invalid_request_error', param: null, code: 'payload_too_large' } }],
    });
    const small = await post(JSON.stringify({ query: '{ viewer { organisation { id } } }' }));
    expect(small.status).toBe(200);
    expect((await small.json()).data.viewer.organisation.id).toEqual(expect.any(String));
 
    // The same over a real socket (chunked transfer encoding).
    const base = await t.listen();
    const overHttp = async (text: string) => {
      const response = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': t.key, 'content-type': 'application/json' },
        body: new ReadableStream({
          start(controller) {
            for (const part of text.match(/.{1,40}/g)!) controller.enqueue(new TextEncoder().encode(part));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      return response.status;
    };
    expect(await overHttp(JSON.stringify({ query: `{ viewer { organisation { id } } } # ${'z'.repeat(300)}` }))).toBe(413);
    expect(await overHttp(JSON.stringify({ query: '{ viewer { organisation { id } } }' }))).toBe(200);
 
    // GET has no body at all: its query is in the URL.
    const get = await fetch(`${base}/graphql?query=${encodeURIComponent('{ viewer { organisation { id } } }')}`, { headers: { 'x-gateway-api-key': t.key, accept: 'application/json' } });
    expect(get.status).toBe(200);
    expect((await get.json()).data.viewer.organisation.id).toEqual(expect.any(String));
  });

  it('non-JSON body: 415', async () => {
    const res = await t.request('POST', '/v1/admin/workspaces', { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: { message: 'Request body must be JSON: send it with Content-Type: application/json.', type: 'invalid_request_error', param: null, code: 'unsupported_media_type' } });
  });

  it('malformed JSON: 400', async () => {
    const res = await t.request('POST', '/v1/admin/workspaces', { rawBody: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: 'We could not parse the JSON body of your request. The body must be valid JSON.', type: 'invalid_request_error', param: null, code: 'invalid_json' } });
  });

  it('wrong type and missing field: 400 with param', async () => {
    const wrong = await t.request('POST', '/v1/admin/workspaces', { body: { name: 42 } });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ error: { message: "Invalid type for 'name': expected a string, but got an integer instead.", type: 'invalid_request_error', param: 'name', code: 'invalid_type' } });
    const missing = await t.request('POST', '/v1/admin/api-keys', { body: { type: 'organisation' } });
    expect(missing.body).toEqual({ error: { message: "Missing required parameter: 'name'.", type: 'invalid_request_error', param: 'name', code: 'missing_required_parameter' } });
    const empty = await t.request('POST', '/v1/admin/workspaces', { body: { name: '  ' } });
    expect(empty.body).toEqual({ error: { message: "'name' must be a non-empty string.", type: 'invalid_request_error', param: 'name', code: null } });
  });

  it('slug taken: 409 conflict', async () => {
    expect((await t.request('POST', '/v1/admin/workspaces', { body: { name: 'A', slug: 'dup' } })).status).toBe(200);
    const res = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'B', slug: 'dup' } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: { message: "A workspace with slug 'dup' already exists.", type: 'invalid_request_error', param: 'slug', code: 'conflict' } });
  });

  it('every response has x-gateway-request-id; the caller’s own is echoed', async () => {
    const fresh = await t.request('GET', '/v1/admin/workspaces');
    expect(fresh.headers.get('x-gateway-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const own = await t.request('GET', '/v1/admin/workspaces', { headers: { 'x-gateway-request-id': 'my-trace-123' } });
    expect(own.headers.get('x-gateway-request-id')).toBe('my-trace-123');
    const unauth = await t.request('GET', '/v1/admin/workspaces', { key: null });
    expect(unauth.headers.get('x-gateway-request-id')).toBeTruthy();
    const health = await t.request('GET', '/healthz', { key: null });
    expect(health.headers.get('x-gateway-request-id')).toBeTruthy();
  });

  it('an unexpected failure is a 500 that names the request id and nothing internal', async () => {
    const broken = await createTestApp();
    try {
      await broken.app.runtime.fork().getConnection().execute('drop table workspaces');
      const res = await broken.request('GET', '/v1/admin/workspaces', { headers: { 'x-gateway-request-id': 'req-500' } });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: { message: 'Internal server error (request req-500).', type: 'server_error', param: null, code: null } });
      const gql = await broken.graphql('{ workspaces { id } }');
      expect(gql.errors?.[0].message).toMatch(/^Internal server error \(request [0-9a-f-]{36}\)\.$/);
      expect(JSON.stringify(gql.body)).not.toContain('workspaces`');
    } finally {
      await broken.close();
    }
  });
});

describe('large bodies', () => {
  let big: TestApp;
  beforeAll(async () => {
    big = await createTestApp();
  });
  afterAll(() => big.close());

  it('a large body (read in steps) is answered as a small one: accepted, malformed, unsafe', async () => {
    const padding = ' '.repeat(70 * 1024);
    const send = (rawBody: string) => big.request('POST', '/v1/admin/workspaces', { rawBody, headers: { 'content-type': 'application/json' } });
    const created = await send(`{"name": "Large body"${padding}}`);
    expect(created.status).toBe(200);
    expect(created.body.name).toBe('Large body');
    const malformed = await send(`{"name": ${padding}`);
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_json');
    const unsafe = await send(`{"name": "a\\u0000b"${padding}}`);
    expect(unsafe.status).toBe(400);
    expect(unsafe.body).toEqual({ error: { message: "Invalid value for 'name': it contains the character U+0000, which text may not hold.", type: 'invalid_request_error', param: 'name', code: 'invalid_character' } });
  });
});
