import { createTestApp } from '../test/helpers/app.js';
import { createOtherOrganisation } from '../test/helpers/tenants.js';
const t = await createTestApp();
const b = await createOtherOrganisation(t);
const never = '00000000-0000-4000-8000-000000000000';
const show = async (m: string, p: string, body?: unknown, key?: string) => { const r = await t.request(m, p, { body, key }); console.log(m, p, r.status, r.headers.get('content-type'), r.text.slice(0, 300)); };
for (const id of [b.workspaceId, never]) {
  await show('GET', `/v1/admin/workspaces/${id}`);
  await show('POST', '/v1/admin/api-keys', { name: 'x', type: 'workspace', workspace_id: id });
  await show('GET', `/v1/collections?workspace_id=${id}`);
  await show('POST', '/v1/collections', { name: 'c', workspace_id: id });
  await show('GET', `/v1/policies/usage-limits?workspace_id=${id}`);
  await show('PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id, enabled: false }] });
  await show('GET', `/v1/guardrails?workspace_id=${id}`);
  const g = await t.graphql('query($id: String!) { workspace(idOrSlug: $id) { id } }', { id });
  console.log('gql', g.status, JSON.stringify(g.body));
}
// B addressing A
const aWs = (await t.request('GET', '/v1/admin/workspaces/default')).body.id;
await show('GET', `/v1/admin/workspaces/${aWs}`, undefined, b.key);
await show('GET', `/v1/admin/workspaces/default`, undefined, b.key);
await t.close();
