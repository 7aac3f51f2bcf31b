import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { killServer, listeningPort, spawnServer, STARTS_WITHIN, type ServerProcess } from '../helpers/server-process.js';

const root = join(import.meta.dirname, '..', '..');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const cwd = mkdtempSync(join(tmpdir(), 'gatehouse-server-'));
const started: ServerProcess[] = [];
afterAll(() => {
  for (const server of started) killServer(server);
  rmSync(cwd, { recursive: true, force: true });
});

/** `src/server.ts` under tsx in `cwd`, with only PATH and HOME from the test's environment: zero configuration otherwise. */
function start(env: Record<string, string>): ServerProcess {
  const server = spawnServer(tsx, [join(root, 'src', 'server.ts')], { cwd, env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? cwd, ...env } });
  started.push(server);
  return server;
}

describe('the server process', () => {
  it('starts with zero configuration, prints the first key once, serves, and stops gracefully on SIGTERM', async () => {
    const server = start({ PORT: '0' });
    const port = await listeningPort(server, 'the server');
    const key = server.output().match(/(gk_live_[A-Za-z0-9]{40})/)![1];
    expect(existsSync(join(cwd, 'data', 'gatehouse.sqlite'))).toBe(true);
    const base = `http://127.0.0.1:${port}`;
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const list = await fetch(`${base}/v1/admin/workspaces`, { headers: { 'x-gateway-api-key': key } });
    expect(list.status).toBe(200);

    // With no other setup, the printed key and the built-in `local` virtual key run the
    // Assistants tool loop with the openai SDK.
    const openai = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, defaultHeaders: { 'x-gateway-virtual-key': 'local' }, maxRetries: 0 });
    const assistant = await openai.beta.assistants.create({
      model: 'local-test',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
    });
    const thread = await openai.beta.threads.create({ messages: [{ role: 'user', content: 'get_weather for Lisbon' }] });
    const waiting = await openai.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id }, { pollIntervalMs: 20 });
    expect(waiting.status).toBe('requires_action');
    const call = waiting.required_action!.submit_tool_outputs.tool_calls[0];
    expect(call.function.name).toBe('get_weather');
    const done = await openai.beta.threads.runs.submitToolOutputsAndPoll(
      waiting.id,
      { thread_id: thread.id, tool_outputs: [{ tool_call_id: call.id, output: 'sunny, 24 °C' }] },
      { pollIntervalMs: 20 },
    );
    expect(done.status).toBe('completed');
    expect(done.usage!.total_tokens).toBeGreaterThan(0);
    const answer = (await openai.beta.threads.messages.list(thread.id, { order: 'desc', limit: 1 })).data[0];
    expect(answer.content[0]).toMatchObject({ type: 'text', text: { value: expect.stringContaining('sunny, 24 °C') } });

    // An open event stream must not keep the process from stopping.
    const stream = await fetch(`${base}/graphql/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-gateway-api-key': key },
      body: JSON.stringify({ query: 'subscription { workspaceEvents { type } }' }),
    });
    expect(stream.status).toBe(200);
    const reading = (async () => {
      const reader = stream.body!.getReader();
      for (;;) if ((await reader.read()).done) return 'ended';
    })();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(await reading).toBe('ended');
    expect(server.output()).toContain('"msg":"stopped"');

    // A restart keeps the data and never prints a key again.
    const again = start({ PORT: '0' });
    const port2 = await listeningPort(again, 'the restarted server');
    expect(again.output()).not.toMatch(/gk_live_/);
    expect((await fetch(`http://127.0.0.1:${port2}/v1/admin/workspaces`, { headers: { 'x-gateway-api-key': key } })).status).toBe(200);
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
  }, 2 * STARTS_WITHIN + 30_000);

  it('refuses to start with a damaged secret key file, saying which file and what to do, exit code 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-badkey-'));
    try {
      writeFileSync(join(dir, 'secret.key'), 'nothex\n', { mode: 0o600 });
      const server = start({ PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'gatehouse.sqlite')}` });
      expect(await server.exited).toBe(1);
      expect(server.output()).toContain(`Gatehouse cannot start: ${join(dir, 'secret.key')} does not hold a secret key (64 hexadecimal digits).`);
      expect(server.output()).toContain('GATEWAY_SECRET_KEY');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, STARTS_WITHIN);

  it('refuses to start on invalid configuration, listing every problem, exit code 1', async () => {
    const server = start({ PORT: 'x', LOG_LEVEL: 'chatty' });
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain('configuration is invalid');
    expect(server.output()).toContain('PORT');
    expect(server.output()).toContain('LOG_LEVEL');
  }, STARTS_WITHIN);
});
