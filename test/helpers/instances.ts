/**
 * Real server processes on one database, for the multi-instance tests (test/e2e/multi-instance*):
 * each is `src/server.ts` in a child process, called over HTTP with the bootstrap key.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { TEST_SECRET_KEY } from './database.js';
import { listeningPort, spawnServer, type ServerProcess } from './server-process.js';

const root = join(import.meta.dirname, '..', '..');
export const KEY = 'gk_live_multiinstance0000000000000000000000000';
export const BETA = { 'OpenAI-Beta': 'assistants=v2' };

export interface Instance extends ServerProcess {
  name: string;
  base: string;
}

/** Starts a server on `database` with short run leases and sweeps; resolves once it listens. */
export async function startInstance(name: string, database: string, env: Record<string, string> = {}): Promise<Instance> {
  const server = spawnServer(process.execPath, ['--import', 'tsx', join(root, 'src', 'server.ts')], {
    cwd: root,
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? root,
      DATABASE_URL: database,
      PORT: '0',
      GATEWAY_SECRET_KEY: TEST_SECRET_KEY,
      GATEWAY_BOOTSTRAP_API_KEY: KEY,
      RUN_LEASE_MS: '1500',
      RUN_SWEEP_INTERVAL_MS: '300',
      ...env,
    },
  });
  const port = await listeningPort(server, name);
  return { ...server, name, base: `http://127.0.0.1:${port}` };
}

/** Stops the instances still running (SIGTERM) and waits for them to exit. */
export async function stopInstances(instances: (Instance | undefined)[]): Promise<void> {
  for (const instance of instances) {
    if (instance && instance.child.exitCode === null && instance.child.signalCode === null) {
      instance.child.kill('SIGTERM');
      await instance.exited;
    }
  }
}

export async function call(instance: Instance, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, key = KEY) {
  const response = await fetch(instance.base + path, {
    method,
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

export async function ok(instance: Instance, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await call(instance, method, path, body, headers);
  expect(r.status, `${instance.name} ${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  return r.body;
}

/** Polls the run on `instance` until it is terminal or waits for tool outputs. */
export async function waitTerminal(instance: Instance, threadId: string, runId: string, ms = 30_000): Promise<any> {
  const until = Date.now() + ms;
  for (;;) {
    const run = await ok(instance, 'GET', `/v1/threads/${threadId}/runs/${runId}`, undefined, BETA);
    if (['completed', 'failed', 'incomplete', 'cancelled', 'expired', 'requires_action'].includes(run.status)) return run;
    if (Date.now() > until) throw new Error(`run ${runId} stayed ${run.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
