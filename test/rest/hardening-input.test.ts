import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFrom } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { errorResponse } from '../helpers/errors.js';

/*
 * The edge's input rule (src/http/input-guard.ts) at both front doors, and the error shape of
 * /graphql/stream (src/http/graphql-stream.ts). The generated-input suite in test/property/ runs
 * the same rule over every route; these pin the exact answers.
 */

const BETA = { 'openai-beta': 'assistants=v2' };
const JSON_HEADERS = { 'content-type': 'application/json' };
const NUL_MESSAGE = (param: string) => `Invalid value for '${param}': it contains the character U+0000, which text may not hold.`;
const DEPTH_MESSAGE = (param: string, limit = 64) => `Invalid value for '${param}': JSON may nest at most ${limit} levels of arrays and objects.`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

function pick(r: { status: number; body: unknown }) {
  return { status: r.status, body: r.body };
}

async function collectionNames(): Promise<string[]> {
  const r = await t.request('GET', '/v1/collections?page_size=100');
  expect(r.status, r.text).toBe(200);
  return r.body.data.map((c: { name: string }) => c.name).sort();
}

/** `{"key":{"key":…1…}}` nested `levels` deep, as text (JSON.stringify itself would overflow). */
function nestedObject(key: string, levels: number): string {
  return `{"${key}":`.repeat(levels) + '1' + '}'.repeat(levels);
}

function nestedArray(levels: number): string {
  return '['.repeat(levels) + ']'.repeat(levels);
}

describe('U+0000 and lone surrogates are refused at the edge (400 naming the parameter)', () => {
  it('in a path parameter', async () => {
    expect(pick(await t.request('GET', '/v1/collections/%00'))).toEqual(errorResponse(400, NUL_MESSAGE('collectionId'), 'collectionId', 'invalid_character'));
  });

  it('in a query value', async () => {
    expect(pick(await t.request('GET', '/v1/collections?search=a%00b'))).toEqual(errorResponse(400, NUL_MESSAGE('search'), 'search', 'invalid_character'));
  });

  it('in a body field, and nothing is written', async () => {
    const before = await collectionNames();
    expect(pick(await t.request('POST', '/v1/collections', { body: { name: 'a\u0000b' } }))).toEqual(
      errorResponse(400, NUL_MESSAGE('name'), 'name', 'invalid_character'),
    );
    expect(await collectionNames()).toEqual(before);
  });

  it('deep in a body, named by its full path', async () => {
    const body = { model: 'gpt-4o-mini', tool_resources: { code_interpreter: { file_ids: ['file\u0000'] } } };
    const param = 'tool_resources.code_interpreter.file_ids[0]';
    expect(pick(await t.request('POST', '/v1/assistants', { body, headers: BETA }))).toEqual(errorResponse(400, NUL_MESSAGE(param), param, 'invalid_character'));
  });

  it('in an object key: the object holding it is named', async () => {
    const r = await t.request('POST', '/v1/collections', { body: { name: 'ok', metadata: { 'k\u0000': 'v' } } });
    expect(pick(r)).toEqual(errorResponse(400, "Invalid parameter name in 'metadata': it contains the character U+0000, which text may not hold.", 'metadata', 'invalid_character'));
  });

  it('a lone surrogate (which no UTF-8 column can hold) is refused the same way', async () => {
    const r = await t.request('POST', '/v1/collections', { rawBody: '{"name":"a\\ud800b"}', headers: JSON_HEADERS });
    expect(pick(r)).toEqual(errorResponse(400, "Invalid value for 'name': it contains the character U+D800, which text may not hold.", 'name', 'invalid_character'));
  });

  it('other control characters and paired surrogates are ordinary text: stored and read back as sent', async () => {
    const name = 'ctl \u0001\u001b\u007f\u2028 emoji \ud83d\ude00';
    const created = await t.request('POST', '/v1/collections', { body: { name } });
    expect(created.status, created.text).toBe(200);
    const read = await t.request('GET', `/v1/collections/${created.body.id}`);
    expect(read.body.name).toBe(name);
  });

  it('GraphQL: in a variable (param is the variable path) and in an inline literal (param is the argument path); nothing runs', async () => {
    const before = await collectionNames();
    const byVariable = await t.graphql('mutation($input: CreateCollectionInput!) { createCollection(input: $input) { id } }', { input: { name: 'a\u0000' } });
    expect({ status: byVariable.status, body: byVariable.body }).toEqual({
      status: 400,
      body: { errors: [{ message: NUL_MESSAGE('input.name'), extensions: { status: 400, type: 'invalid_request_error', param: 'input.name', code: 'invalid_character' } }] },
    });
    const byLiteral = await t.graphql('mutation { createCollection(input: { name: "a\\u0000" }) { id } }');
    expect(byLiteral.errors).toEqual([
      {
        message: NUL_MESSAGE('input.name'),
        locations: [{ line: 1, column: 29 }],
        extensions: { status: 400, type: 'invalid_request_error', param: 'input.name', code: 'invalid_character' },
      },
    ]);
    expect(byLiteral.data).toBeUndefined();
    expect(await collectionNames()).toEqual(before);
  });
});

describe('numbers too large to be represented are refused at the edge', () => {
  it('1e400 (read as infinity) in a run option and in a nested JSON value: 400 naming the place, nothing written', async () => {
    const before = await t.request('GET', '/v1/assistants', { headers: BETA });
    const cases: Array<[string, string, string]> = [
      ['/v1/threads/runs', '{"assistant_id":"asst_x","temperature":1e400}', 'temperature'],
      ['/v1/assistants', '{"model":"gpt-4o-mini","metadata":{"a":"b"},"tool_resources":{"x":[1,-1e400]}}', 'tool_resources.x[1]'],
    ];
    for (const [path, rawBody, param] of cases) {
      const r = await t.request('POST', path, { rawBody, headers: { ...JSON_HEADERS, ...BETA } });
      expect(pick(r), path).toEqual(errorResponse(400, `Invalid value for '${param}': the number is too large to be represented.`, param, 'invalid_number'));
    }
    const after = await t.request('GET', '/v1/assistants', { headers: BETA });
    expect(after.body.data).toEqual(before.body.data);
  });
});

describe('JSON nesting is bounded at the edge (JSON_MAX_DEPTH, default 64)', () => {
  it('tool_resources 50,000 levels deep on POST /v1/assistants and /v1/threads', async () => {
    for (const path of ['/v1/assistants', '/v1/threads']) {
      const rawBody = `{"model":"gpt-4o-mini","tool_resources":${nestedObject('a', 50_000)}}`;
      const r = await t.request('POST', path, { rawBody, headers: { ...JSON_HEADERS, ...BETA } });
      expect(pick(r), path).toEqual(errorResponse(400, DEPTH_MESSAGE('tool_resources'), 'tool_resources', 'nesting_too_deep'));
    }
  });

  it('attachments 100,000 levels deep on POST /v1/threads/{id}/messages, and the thread stays readable', async () => {
    const thread = await t.request('POST', '/v1/threads', { body: {}, headers: BETA });
    expect(thread.status, thread.text).toBe(200);
    const rawBody = `{"role":"user","content":"hi","attachments":${nestedArray(100_000)}}`;
    const r = await t.request('POST', `/v1/threads/${thread.body.id}/messages`, { rawBody, headers: { ...JSON_HEADERS, ...BETA } });
    expect(pick(r)).toEqual(errorResponse(400, DEPTH_MESSAGE('attachments'), 'attachments', 'nesting_too_deep'));
    const messages = await t.request('GET', `/v1/threads/${thread.body.id}/messages`, { headers: BETA });
    expect(messages.status, messages.text).toBe(200);
    expect(messages.body.data).toEqual([]);
  });

  it('a body that is itself too deep has no parameter to name', async () => {
    const r = await t.request('POST', '/v1/collections', { rawBody: nestedArray(70), headers: JSON_HEADERS });
    expect(pick(r)).toEqual(errorResponse(400, 'Invalid request body: JSON may nest at most 64 levels of arrays and objects.', null, 'nesting_too_deep'));
  });

  it('the limit is exact and configurable: depth 3 passes the edge, depth 4 does not', async () => {
    const small = await createTestApp({ JSON_MAX_DEPTH: 3 });
    try {
      const unknown = '00000000-0000-4000-8000-000000000000';
      const atLimit = await small.request('DELETE', `/v1/collections/${unknown}`, { rawBody: '{"a":{"b":{}}}', headers: JSON_HEADERS });
      expect(atLimit.status, atLimit.text).toBe(404);
      const over = await small.request('DELETE', `/v1/collections/${unknown}`, { rawBody: '{"a":{"b":{"c":[]}}}', headers: JSON_HEADERS });
      expect(pick(over)).toEqual(errorResponse(400, DEPTH_MESSAGE('a', 3), 'a', 'nesting_too_deep'));
    } finally {
      await small.close();
    }
    expect(() => configFrom({ JSON_MAX_DEPTH: 0 })).toThrow(/JSON_MAX_DEPTH/);
    expect(() => configFrom({ JSON_MAX_DEPTH: 1001 })).toThrow(/JSON_MAX_DEPTH/);
  });

  it('GraphQL: a JSON variable 100,000 levels deep and an inline literal 100 levels deep', async () => {
    const query = 'mutation($m: JSON) { createThread(input: { metadata: $m }) { id } }';
    const response = await t.app.fetch(
      new Request('http://gatehouse.test/graphql', {
        method: 'POST',
        headers: { ...JSON_HEADERS, 'x-gateway-api-key': t.key },
        body: `{"query":${JSON.stringify(query)},"variables":{"m":${nestedArray(100_000)}}}`,
      }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ message: DEPTH_MESSAGE('m'), extensions: { status: 400, type: 'invalid_request_error', param: 'm', code: 'nesting_too_deep' } }],
    });
    const literal = await t.graphql(`mutation { createThread(input: { metadata: ${nestedArray(100)} }) { id } }`);
    expect(literal.errors?.map((e: any) => e.extensions)).toEqual([{ status: 400, type: 'invalid_request_error', param: 'input', code: 'nesting_too_deep' }]);
  });
});

describe('GraphQL errors carry status, type, param and code everywhere', () => {
  async function stream(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await t.app.fetch(
      new Request(`http://gatehouse.test${path}`, {
        method,
        headers: { ...JSON_HEADERS, 'x-gateway-api-key': t.key, ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    return { status: response.status, contentType: response.headers.get('content-type'), body: await response.json() };
  }
  const ext = (status: number, code: string | null, type = 'invalid_request_error') => ({ status, type, param: null, code });

  it('an unknown stream token, on POST and DELETE /graphql/stream', async () => {
    const post = await stream('POST', '/graphql/stream?token=nope', { query: '{ viewer { organisation { name } } }', extensions: { operationId: '1' } });
    expect(post).toEqual({ status: 404, contentType: 'application/json; charset=utf-8', body: { errors: [{ message: 'Stream not found', extensions: ext(404, 'stream_not_found') }] } });
    const del = await stream('DELETE', '/graphql/stream?token=zzz');
    expect(del).toEqual({ status: 404, contentType: 'application/json; charset=utf-8', body: { errors: [{ message: 'Stream not found', extensions: ext(404, 'stream_not_found') }] } });
  });

  it('refusals graphql-sse sends without a body get one', async () => {
    expect(await stream('PATCH', '/graphql/stream?token=zzz')).toEqual({
      status: 405,
      contentType: 'application/json; charset=utf-8',
      body: { errors: [{ message: 'Method PATCH is not allowed here. Allowed: GET, POST, PUT, DELETE.', extensions: ext(405, 'method_not_allowed') }] },
    });
  });

  it('syntax, validation and authentication errors on a single stream are refused with their status', async () => {
    const sse = { accept: 'text/event-stream' };
    const syntax = await stream('POST', '/graphql/stream', { query: '{ viewer ' }, sse);
    expect(syntax.status).toBe(400);
    expect(syntax.body).toEqual({ errors: [{ message: 'Syntax Error: Expected Name, found <EOF>.', extensions: { ...ext(400, 'GRAPHQL_PARSE_FAILED') } }] });
    const invalid = await stream('POST', '/graphql/stream', { query: '{ viewer { nope } }' }, sse);
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({
      errors: [{ message: 'Cannot query field "nope" on type "Viewer".', locations: [{ line: 1, column: 12 }], extensions: ext(400, 'GRAPHQL_VALIDATION_FAILED') }],
    });
    const unauthenticated = await stream('POST', '/graphql/stream', { query: '{ viewer { organisation { name } } }' }, { ...sse, 'x-gateway-api-key': 'gk_wrong_key_000000000000' });
    expect(unauthenticated.status).toBe(401);
    // The same extensions as the error /graphql gives for a wrong key.
    const overGraphql = await t.graphql('{ viewer { organisation { name } } }', {}, 'gk_wrong_key_000000000000');
    expect(unauthenticated.body.errors).toEqual(overGraphql.errors);
    expect(unauthenticated.body.errors[0].extensions).toMatchObject({ status: 401, type: 'authentication_error', param: null, code: 'invalid_api_key' });
    const nul = await stream('POST', '/graphql/stream', { query: 'query($s: String!) { collection(idOrSlug: $s) { id } }', variables: { s: '\u0000' } }, sse);
    expect(nul).toEqual({
      status: 400,
      contentType: 'application/json; charset=utf-8',
      body: { errors: [{ message: NUL_MESSAGE('s'), extensions: { status: 400, type: 'invalid_request_error', param: 's', code: 'invalid_character' } }] },
    });
  });

  it("Yoga's own refusals on /graphql: extensions say the HTTP status; an unsupported body type is a 415 with a body", async () => {
    const put = await stream('PUT', '/graphql', {});
    expect(put).toEqual({
      status: 405,
      contentType: 'application/json; charset=utf-8',
      body: { errors: [{ message: 'GraphQL only supports GET and POST requests.', extensions: { ...ext(405, 'BAD_REQUEST') } }] },
    });
    const text = await t.app.fetch(new Request('http://gatehouse.test/graphql', { method: 'POST', headers: { 'content-type': 'text/plain', 'x-gateway-api-key': t.key }, body: '{ viewer { organisation { name } } }' }));
    expect({ status: text.status, body: await text.json() }).toEqual({
      status: 415,
      body: { errors: [{ message: 'Request body must be JSON: send it with Content-Type: application/json.', extensions: ext(415, 'unsupported_media_type') }] },
    });
  });

  it('a path under /graphql that nothing serves is the ordinary unknown URL', async () => {
    const r = await t.request('GET', '/graphql/nope');
    expect(pick(r)).toEqual(errorResponse(404, 'Unknown request URL: GET /graphql/nope.', null, 'unknown_url'));
  });

  it('the 413 for a 2 MB /graphql document', async () => {
    const r = await stream('POST', '/graphql', { query: `{ viewer { organisation { name } } } # ${'x'.repeat(2_000_000)}` });
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ errors: [{ message: 'Request body is larger than the limit of 1048576 bytes.', extensions: ext(413, 'payload_too_large') }] });
  });
});
