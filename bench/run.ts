import { createApp } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { createHttpServer } from '../src/http/http-server.js';
import { intEnv, listen } from './lib.js';
import { measureInTurn, type Target } from './load-in-turn.js';

/**
 * `npm run bench`: throughput and latency of the same read over REST and over /graphql, on a real
 * HTTP server on 127.0.0.1. Prints ratios and percentiles; it asserts nothing (targets live here,
 * not in timed unit tests). Target: REST ≥ 1.0× the GraphQL throughput for the same read.
 *
 * The two are measured in turn, ROUNDS times over, from a client in a worker thread
 * (bench/load-in-turn.ts), and the server's CPU per request is printed beside them. Until
 * 2026-11-24 REST ran all its requests first, then GraphQL, with the client in this process: the
 * first one measured paid the process's warming up (REST 0.87× GraphQL in that order, 2.1× with
 * the order swapped, from the same code), while the server's CPU per REST read was already about
 * 0.6× a GraphQL one.
 */
const REQUESTS = intEnv('BENCH_REQUESTS', 3000);
const CONCURRENCY = intEnv('BENCH_CONCURRENCY', 16);
const ROUNDS = intEnv('BENCH_ROUNDS', 4);
const KEY = 'bench-bootstrap-key-0123456789';

const config = configFrom({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: KEY });
const app = await createApp(config);
const gateway = createHttpServer(app.yoga, config);
const base = await listen(gateway.server);

const headers = { 'x-gateway-api-key': KEY };
const rest: Target = { url: `${base}/v1/admin/workspaces/default`, method: 'GET', headers };
const graphql: Target = {
  url: `${base}/graphql`,
  method: 'POST',
  headers: { ...headers, 'content-type': 'application/json' },
  body: JSON.stringify({
    query: 'query RestGetWorkspace($id: String!) { workspace(idOrSlug: $id) { id slug name description is_default: isDefault organisation_id: organisationId created_at: createdAt last_updated_at: updatedAt } }',
    variables: { id: 'default' },
  }),
};

console.log(`REST and /graphql, the same read: ${REQUESTS} requests each at concurrency ${CONCURRENCY} in ${ROUNDS} interleaved rounds, client in a worker thread, SQLite in memory`);
const [r, g] = await measureInTurn(
  [
    { name: 'REST GET /v1/admin/workspaces/default', target: rest, requests: REQUESTS },
    { name: 'GraphQL workspace(idOrSlug: "default")', target: graphql, requests: REQUESTS },
  ],
  { rounds: ROUNDS, concurrency: CONCURRENCY },
);
for (const [name, m] of [['REST', r], ['GraphQL', g]] as const) {
  console.log(`  ${name.padEnd(8)} p95 ${m.p95.toFixed(2)} ms   p99 ${m.p99.toFixed(2)} ms`);
}
console.log(`REST / GraphQL throughput ratio: ${(r.rps / g.rps).toFixed(2)}× (target ≥ 1.00×)`);
console.log(`GraphQL / REST server CPU per request: ${(g.cpuPerRequest / r.cpuPerRequest).toFixed(2)}×`);

await gateway.drain();
await app.close();
