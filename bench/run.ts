import { createServer } from 'node:http';
import { createApp } from '../src/app.js';
import { configFrom } from '../src/config.js';
import { inParallel, intEnv, listen, quantile } from './lib.js';

/**
 * `npm run bench`: throughput and latency of the same read over REST and over /graphql, on a real
 * HTTP server on 127.0.0.1. Prints ratios and percentiles; it asserts nothing (targets live here,
 * not in timed unit tests). Target: REST ≥ 1.0× the GraphQL throughput for the same read.
 */
const REQUESTS = intEnv('BENCH_REQUESTS', 3000);
const CONCURRENCY = intEnv('BENCH_CONCURRENCY', 16);
const KEY = 'bench-bootstrap-key-0123456789';

const app = await createApp(configFrom({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: KEY }));
const server = createServer(app.yoga);
const base = await listen(server);

interface Result {
  name: string;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
}

async function measure(name: string, send: () => Promise<Response>): Promise<Result> {
  for (let i = 0; i < 200; i++) await (await send()).arrayBuffer(); // warm-up
  const latencies: number[] = [];
  const started = performance.now();
  await inParallel(CONCURRENCY, REQUESTS, async () => {
    const t0 = performance.now();
    const response = await send();
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${name}: HTTP ${response.status}`);
    latencies.push(performance.now() - t0);
  });
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { name, rps: latencies.length / seconds, p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), p99: quantile(latencies, 0.99) };
}

const headers = { 'x-gateway-api-key': KEY };
const rest = await measure('REST GET /v1/admin/workspaces/default', () => fetch(`${base}/v1/admin/workspaces/default`, { headers }));
const graphql = await measure('GraphQL workspace(idOrSlug: "default")', () =>
  fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'query RestGetWorkspace($id: String!) { workspace(idOrSlug: $id) { id slug name description is_default: isDefault organisation_id: organisationId created_at: createdAt last_updated_at: updatedAt } }',
      variables: { id: 'default' },
    }),
  }),
);

for (const r of [rest, graphql]) {
  console.log(`${r.name.padEnd(42)} ${r.rps.toFixed(0).padStart(6)} req/s   p50 ${r.p50.toFixed(2)} ms   p95 ${r.p95.toFixed(2)} ms   p99 ${r.p99.toFixed(2)} ms`);
}
console.log(`REST / GraphQL throughput ratio: ${(rest.rps / graphql.rps).toFixed(2)}× (target ≥ 1.00×)`);

server.close();
await app.close();
