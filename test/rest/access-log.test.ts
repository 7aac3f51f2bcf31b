import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { formatPretty } from '../../src/lib/pretty-log.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// Every request writes one access line at info: request id, method, route template, status,
// duration and, when authenticated, the API key's id and workspace's id. Never a key, never the
// raw URL or its query.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function appWithLog(env: Record<string, string> = {}): Promise<string[]> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  t = await createTestApp({ LOG_LEVEL: 'info', ...env }, { logDestination: sink });
  return lines;
}

const accessLines = (lines: string[]) => lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request' || entry.msg === 'request failed');

describe('access log', () => {
  it('writes one info line per request with ids and the route template, never a secret', async () => {
    const lines = await appWithLog();
    const app = t!;
    const created = await app.request('POST', '/v1/admin/api-keys', { body: { name: 'log', type: 'workspace', workspace_id: 'default' } });
    const workspaceKey: string = created.body.key;
    const before = lines.length;

    const ok = await app.request('GET', '/v1/admin/workspaces/default?secret_hint=hunter2', { key: workspaceKey });
    const anonymous = await app.request('GET', '/v1/admin/workspaces', { key: null });
    const unknown = await app.request('GET', '/not/served/here?token=abc');
    await app.graphql('{ __typename }', {}, workspaceKey);

    const entries = accessLines(lines.slice(before));
    expect(entries).toHaveLength(4);
    expect(entries[0]).toMatchObject({
      level: 30,
      requestId: ok.headers.get('x-gateway-request-id'),
      method: 'GET',
      route: '/v1/admin/workspaces/:id',
      status: ok.status,
      apiKeyId: created.body.id,
      workspaceId: created.body.workspace_id,
    });
    expect(typeof entries[0].ms).toBe('number');
    expect(entries[1]).toMatchObject({ level: 30, route: '/v1/admin/workspaces', status: 401, requestId: anonymous.headers.get('x-gateway-request-id') });
    expect(entries[1]).not.toHaveProperty('apiKeyId');
    expect(entries[2]).toMatchObject({ level: 30, route: 'unknown', status: 404, requestId: unknown.headers.get('x-gateway-request-id') });
    expect(entries[3]).toMatchObject({ level: 30, route: '/graphql', method: 'POST', status: 200, apiKeyId: created.body.id, workspaceId: created.body.workspace_id });

    const all = lines.join('\n');
    expect(all).not.toContain(workspaceKey);
    expect(all).not.toContain(app.key);
    expect(all).not.toContain('hunter2');
    expect(all).not.toContain('token=abc');
  });

  it('LOG_FORMAT=pretty writes readable lines instead of JSON', async () => {
    const lines = await appWithLog({ LOG_FORMAT: 'pretty' });
    await t!.request('GET', '/v1/admin/workspaces');
    const access = lines.filter((line) => / INFO +request /.test(line));
    expect(access).toHaveLength(1);
    expect(access[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  request requestId=\S+ method=GET route=\/v1\/admin\/workspaces status=200 ms=\d+ apiKeyId=\S+$/);
    expect(lines.some((line) => line.startsWith('{'))).toBe(false);
  });
});

describe('formatPretty', () => {
  it('shows time, level, message and fields, then an error stack indented', () => {
    const line = JSON.stringify({ level: 50, time: Date.UTC(2026, 0, 2, 3, 4, 5, 6), pid: 1, hostname: 'h', service: 'gatehouse', msg: 'boom', requestId: 'r1', detail: { a: 1 }, err: { message: 'bad', stack: 'Error: bad\n    at x' } });
    expect(formatPretty(line)).toBe('03:04:05.006 ERROR boom requestId=r1 detail={"a":1}\n    Error: bad\n        at x');
  });

  it('passes through a line that is not JSON', () => {
    expect(formatPretty('plain text')).toBe('plain text');
  });
});
