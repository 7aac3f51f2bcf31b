import { createTestApp } from '../test/helpers/app.js';
const t = await createTestApp({GRAPHQL_MAX_COST: 1});
const show = async (q: string, accept = 'application/json') => { const r = await t.app.fetch(new Request('http://x/graphql', { method: 'POST', headers: { 'content-type': 'application/json', accept, 'x-gateway-api-key': t.key }, body: JSON.stringify({ query: q }) })); console.log(r.status, r.headers.get('content-type'), (await r.text()).slice(0, 300)); };
for (const [levels, leaf] of [[13, 30], [14, 20], [14, 60]]) {
  let q = `id name slug ${Array(leaf).fill('name').join(' ')}`;
  for (let i = 0; i < levels; i++) q = `childCollections { ${q} }`;
  q = `{ collection(idOrSlug: "default") { ${q} } }`;
  console.log(levels, leaf);
  await show(q);
}
await show('{ workspaces { id } }');
await t.close();
