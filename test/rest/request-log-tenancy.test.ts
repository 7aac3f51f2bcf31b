/**
 * The request log's tenancy: a workspace key reads only its workspace's records (another
 * workspace is 404), an organisation key reads them all or one workspace with `workspace_id`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function chat(key: string | undefined, content: string) {
  return t.request('POST', '/v1/chat/completions', { key, body: { model: '@local/local', messages: [{ role: 'user', content }] } });
}

describe('request log tenancy', () => {
  it('workspace keys see their workspace; the organisation key sees all and filters', async () => {
    const ws = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Team B' } });
    expect(ws.status, ws.text).toBe(200);
    await t.request('PUT', '/v1/integrations/local/workspaces', { body: { workspaces: [{ id: ws.body.id, enabled: true }] } });
    const created = await t.request('POST', '/v1/admin/api-keys', { body: { name: 'b key', type: 'workspace', workspace_id: ws.body.id } });
    const teamKey: string = created.body.key;

    expect((await chat(undefined, 'from the default workspace')).status).toBe(200);
    const fromB = await chat(teamKey, 'from team b');
    expect(fromB.status, fromB.text).toBe(200);

    const own = await t.request('GET', '/v1/logs', { key: teamKey });
    expect(own.status).toBe(200);
    expect(own.body.data.map((r: any) => r.workspace_id)).toEqual([ws.body.id]);
    const other = await t.request('GET', '/v1/logs?workspace_id=default', { key: teamKey });
    expect(other.status).toBe(404);
    expect(other.body.error).toMatchObject({ param: 'workspace_id', code: 'workspace_not_found' });

    const all = await t.request('GET', '/v1/logs');
    expect(all.body.data).toHaveLength(2);
    const onlyB = await t.request('GET', `/v1/logs?workspace_id=${ws.body.slug}`);
    expect(onlyB.body.data.map((r: any) => r.workspace_id)).toEqual([ws.body.id]);

    const summary = await t.graphql('{ usageSummary(groupBy: [workspace]) { workspaceId requests totalTokens } }', {}, teamKey);
    expect(summary.data.usageSummary).toEqual([{ workspaceId: ws.body.id, requests: 1, totalTokens: fromB.body.usage.total_tokens }]);
  });
});
