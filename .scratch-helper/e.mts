import { createTestApp } from '../test/helpers/app.js';
const t = await createTestApp({GRAPHQL_MAX_COST: 1});
const show = async (q: string) => { const r = await t.app.fetch(new Request('http://x/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'x-gateway-api-key': t.key }, body: JSON.stringify({ query: q }) })); console.log(r.status, (await r.text()).slice(0, 300)); };
for (const levels of [6, 12, 13, 14, 15]) {
  let q = `name details { childCollectionsCount promptsCount }`;
  for (let i = 1; i < levels; i++) q = `name details { childCollectionsCount promptsCount } childCollections { ${q} }`;
  q = `{ collection(idOrSlug: "default") { ${q} } }`;
  console.log(levels);
  await show(q);
}
await t.close();
