/**
 * A REST request over node:http has its body read from node's request by its events
 * (src/http/body-limit.ts readRequestLimited), not through the fetch API's stream: the body read
 * must be the same, pieces and all, and the limit must hold the same way.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_KEY, type TestApp } from '../../helpers/app.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp({ BODY_LIMIT_BYTES: 200 });
  base = await t.listen();
});
afterAll(() => t.close());

/** A POST whose body is sent in `pieces` (chunked: no Content-Length), each in its own write. */
function chunkedPost(path: string, pieces: string[]): Promise<{ status: number; body: string } | { error: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const req = httpRequest({ hostname, port, method: 'POST', path, headers: { 'x-gateway-api-key': TEST_KEY, 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    let i = 0;
    const next = () => {
      if (i === pieces.length) return void req.end();
      req.write(pieces[i++]);
      setTimeout(next, 5);
    };
    next();
  });
}

describe('REST bodies read from node:http', () => {
  it('a JSON body sent in several pieces is read whole', async () => {
    const answer = await chunkedPost('/v1/admin/workspaces', ['{"na', 'me":"Pieces', ' of a body"', '}']);
    expect(answer).toMatchObject({ status: 200 });
    expect(JSON.parse((answer as { body: string }).body)).toMatchObject({ name: 'Pieces of a body' });
  });

  it('an empty body is no body, and a malformed one a 400', async () => {
    const empty = await chunkedPost('/v1/admin/workspaces', []);
    expect(empty).toMatchObject({ status: 400 });
    expect((empty as { body: string }).body).not.toContain('invalid_json');
    const malformed = await chunkedPost('/v1/admin/workspaces', ['{"name":', '"x"']);
    expect(malformed).toMatchObject({ status: 400 });
    expect((malformed as { body: string }).body).toContain('"code":"invalid_json"');
  });

  it('a body over the limit without a declared length is not read past the limit, and the server goes on serving', async () => {
    const answer = await chunkedPost('/v1/admin/workspaces', Array.from({ length: 10 }, () => '{"name":"' + 'y'.repeat(40) + '"}'));
    // The request is destroyed at the limit (as cancelling the fetch API's stream did): either the
    // 413 arrives first or the connection is reset; never a 2xx.
    if ('status' in answer) expect(answer.status).toBe(413);
    else expect(answer.error).toMatch(/ECONNRESET|EPIPE|socket hang up/);
    const after = await chunkedPost('/v1/admin/workspaces', ['{"name":"After"}']);
    expect(after).toMatchObject({ status: 200 });
  });
});
