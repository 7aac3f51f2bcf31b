import { createServer } from 'node:http';
import { print } from 'graphql';
import { createApp } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { createHttpServer } from '../src/http/http-server.js';
import { loadOperations } from '../rest/documents.js';
import { schema } from '../schema/index.js';
import { goalLine, inParallel, intEnv, listen, tempDatabase } from './lib.js';
import { measureInTurn, type Target } from './load-in-turn.js';

/**
 * `npm run bench` (part): a REST read against the same read over /graphql and against a bare
 * `node:http` server sending the very bytes the gateway answered. `GET /v1/collections/{id}` of a
 * collection with 20 children, then of one with 1,000. The client runs in a worker thread, so the
 * main thread holds only the servers: its CPU time per request (Linux: the thread's schedstat) is
 * the server's own cost and does not depend on the machine's load; throughput is printed beside it.
 * Goals: REST ≥ 1.5× /graphql and ≥ 15% of the bare server; 1,000 children ≤ 5× 20 children.
 */
const REQUESTS = intEnv('BENCH_REQUESTS', 1000);
const LARGE_REQUESTS = intEnv('BENCH_LARGE_REQUESTS', 100);
const ROUNDS = intEnv('BENCH_ROUNDS', 4);
const CONCURRENCY = intEnv('BENCH_CONCURRENCY', 8);
const KEY = 'bench-bootstrap-key-0123456789';
const HEADERS = { 'x-gateway-api-key': KEY, 'content-type': 'application/json' };

const db = tempDatabase('rest-read', 600);
const config = configFrom({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: KEY });
const app = await createApp(config);
const gateway = createHttpServer(app.yoga, config);
const base = await listen(gateway.server);

async function post(path: string, body: unknown): Promise<any> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  const json = await response.json();
  if (response.status !== 200) throw new Error(`${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** A top-level collection with `children` child collections; its id. */
async function collectionWith(children: number): Promise<string> {
  const { id } = await post('/v1/collections', { name: `Parent of ${children}` });
  let n = 0;
  await inParallel(4, children, async () => {
    await post('/v1/collections', { name: `Child ${++n}`, parent_collection_id: id });
  });
  return id;
}

const small = await collectionWith(20);
const large = await collectionWith(1000);

const restTarget = (id: string): Target => ({ url: `${base}/v1/collections/${id}`, method: 'GET', headers: { 'x-gateway-api-key': KEY } });
const operation = loadOperations(schema).get('RestGetCollection')!;
const graphqlTarget: Target = {
  url: `${base}/graphql`,
  method: 'POST',
  headers: { ...HEADERS, accept: 'application/json' },
  body: JSON.stringify({ query: print(operation.document), variables: { collectionId: small } }),
};

// The bare server answers with the gateway's own bytes and content type.
const answer = await fetch(restTarget(small).url, { headers: restTarget(small).headers });
const bytes = Buffer.from(await answer.arrayBuffer());
const contentType = answer.headers.get('content-type')!;
const viaGraphql = await (await fetch(graphqlTarget.url, graphqlTarget)).json();
if (JSON.stringify(viaGraphql.data?.collection) !== bytes.toString('utf8')) throw new Error('REST and /graphql answered different collections.');
const bare = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': contentType, 'content-length': bytes.length });
  res.end(bytes);
});
const bareBase = await listen(bare);

console.log(`REST reads: GET /v1/collections/{id} (${bytes.length} bytes with 20 children), ${REQUESTS} requests at concurrency ${CONCURRENCY} in ${ROUNDS} interleaved rounds, client in a worker thread, SQLite file (WAL)`);
const [rest, graphql, plain, wide] = await measureInTurn([
  { name: 'REST GET /v1/collections/{id}, 20 children', target: restTarget(small), requests: REQUESTS },
  { name: 'POST /graphql, the same operation', target: graphqlTarget, requests: REQUESTS },
  { name: 'bare node:http, the same bytes', target: { url: bareBase, method: 'GET', headers: {} }, requests: REQUESTS },
  { name: 'REST GET /v1/collections/{id}, 1,000 children', target: restTarget(large), requests: LARGE_REQUESTS },
], { rounds: ROUNDS, concurrency: CONCURRENCY });

/** A lower-bound goal (`value` ≥ `goal`) as goalLine's ratio (goal / value: met when ≤ 1). */
const atLeast = (what: string, value: number, goal: number, unit = '×') => goalLine(what, `${value.toFixed(2)}${unit}`, `≥ ${goal}${unit}`, goal / value);
atLeast('REST / GraphQL, server CPU per request', graphql.cpuPerRequest / rest.cpuPerRequest, 1.5);
atLeast('REST / GraphQL, throughput', rest.rps / graphql.rps, 1.5);
atLeast('REST / bare node:http, server CPU per request', (100 * plain.cpuPerRequest) / rest.cpuPerRequest, 15, '%');
atLeast('REST / bare node:http, throughput', (100 * rest.rps) / plain.rps, 15, '%');
const widthRatio = wide.cpuPerRequest / rest.cpuPerRequest;
goalLine('1,000 children / 20 children, server CPU', `${widthRatio.toFixed(2)}×`, '≤ 5×', widthRatio / 5);
const latencyRatio = wide.p50 / rest.p50;
goalLine('1,000 children / 20 children, latency p50', `${latencyRatio.toFixed(2)}×`, '≤ 5×', latencyRatio / 5);

bare.close();
await gateway.drain();
await app.close();
db.remove();
