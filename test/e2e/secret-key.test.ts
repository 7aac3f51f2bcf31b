/**
 * Integration secrets at rest (README "Configuration": GATEWAY_SECRET_KEY, else a key generated in
 * the data directory, mode 600). The key is stored AES-256-GCM encrypted, and what a run sends
 * upstream is the original key: an `openai` integration points at a fake OpenAI-compatible server
 * on 127.0.0.1 that records the Authorization header it receives. Restarts happen on a file
 * database, so the second app must decrypt what the first one wrote.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptSecret } from '../../src/lib/crypto.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { startFakeOpenAI, textReply, type FakeOpenAI } from '../helpers/fake-openai-server.js';
import { BETA, ok, waitFor } from '../helpers/run-fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'gatehouse-secret-key-'));
const VK = { ...BETA, 'x-gateway-virtual-key': 'upstream' };
const UPSTREAM_KEY = 'sk-upstream-AT-REST-0123456789abcdef';
const CONFIGURED_KEY = '0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI(textReply(['Hello', ' from upstream']));
});
afterAll(async () => {
  await fake.close();
  rmSync(root, { recursive: true, force: true });
});

/** An `openai` integration on the fake server, enabled for the default workspace (virtual key `upstream`). */
async function createUpstream(t: TestApp, key = UPSTREAM_KEY): Promise<void> {
  const created = await t.request('POST', '/v1/integrations', {
    body: { name: 'Upstream', slug: 'upstream', ai_provider_id: 'openai', key, configurations: { base_url: fake.url } },
  });
  expect(created.status).toBe(200);
  await ok(t, 'PUT', '/v1/integrations/upstream/workspaces', { workspaces: [{ id: 'default', enabled: true }] }, {});
}

/** A run on the `upstream` virtual key, to completion; returns the Authorization header the fake saw. */
async function runThroughUpstream(t: TestApp): Promise<string | undefined> {
  const before = fake.requests.length;
  const assistant = await ok(t, 'POST', '/v1/assistants', { model: 'gpt-fake' }, VK);
  const run = await ok(t, 'POST', '/v1/threads/runs', { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'hi' }] } }, VK);
  const done = await waitFor(t, run.thread_id, run.id, ['completed', 'failed']);
  expect(done.status).toBe('completed');
  expect(fake.requests.length).toBe(before + 1);
  return fake.requests.at(-1)!.headers.authorization;
}

/** What the database holds for the integration's key. */
async function storedKey(t: TestApp): Promise<{ encrypted_key: string; masked_key: string }> {
  const rows = await t.app.runtime.fork().getConnection().execute("select encrypted_key, masked_key from integrations where slug = 'upstream'");
  expect(rows).toHaveLength(1);
  return rows[0] as { encrypted_key: string; masked_key: string };
}

describe('with GATEWAY_SECRET_KEY configured', () => {
  const dir = join(root, 'configured');
  const env = { DATABASE_URL: `sqlite:${join(dir, 'gatehouse.sqlite')}`, GATEWAY_SECRET_KEY: CONFIGURED_KEY };

  it('stores the key encrypted with it, writes no key file, and sends the original key upstream, also after a restart', async () => {
    const first = await createTestApp(env);
    try {
      await createUpstream(first);
      const stored = await storedKey(first);
      expect(stored.encrypted_key).toMatch(/^v1:[A-Za-z0-9+/]+={0,2}$/);
      expect(stored.encrypted_key).not.toContain(UPSTREAM_KEY);
      // Encrypted with exactly the configured key.
      expect(decryptSecret(stored.encrypted_key, Buffer.from(CONFIGURED_KEY, 'hex'))).toBe(UPSTREAM_KEY);
      expect(stored.masked_key).toBe('************cdef');
      // A configured key means no generated one beside the database.
      expect(existsSync(join(dir, 'secret.key'))).toBe(false);
      expect(await runThroughUpstream(first)).toBe(`Bearer ${UPSTREAM_KEY}`);
    } finally {
      await first.close();
    }

    const second = await createTestApp(env);
    try {
      expect(await runThroughUpstream(second)).toBe(`Bearer ${UPSTREAM_KEY}`);
      expect(existsSync(join(dir, 'secret.key'))).toBe(false);
    } finally {
      await second.close();
    }
  });
});

// A generated key lives beside the SQLite file; PostgreSQL needs a configured one (the configuration requires it).
describe.skipIf(onPostgres)('without GATEWAY_SECRET_KEY', () => {
  const dir = join(root, 'generated');
  const env = { DATABASE_URL: `sqlite:${join(dir, 'gatehouse.sqlite')}` };
  const keyFile = join(dir, 'secret.key');
  let generated = '';

  it('generates data/secret.key (64 hex characters, mode 600) on first start and encrypts with it', async () => {
    expect(existsSync(keyFile)).toBe(false);
    const first = await createTestApp(env);
    try {
      expect(existsSync(keyFile)).toBe(true);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      generated = readFileSync(keyFile, 'utf8').trim();
      expect(generated).toMatch(/^[0-9a-f]{64}$/);

      await createUpstream(first);
      const stored = await storedKey(first);
      expect(stored.encrypted_key).not.toContain(UPSTREAM_KEY);
      expect(decryptSecret(stored.encrypted_key, Buffer.from(generated, 'hex'))).toBe(UPSTREAM_KEY);
      expect(await runThroughUpstream(first)).toBe(`Bearer ${UPSTREAM_KEY}`);
    } finally {
      await first.close();
    }
  });

  it('reuses the same file after a restart: the second app decrypts what the first wrote, and encrypts new keys with it', async () => {
    expect(generated).not.toBe('');
    const second = await createTestApp(env);
    try {
      // The file is neither regenerated nor loosened.
      expect(readFileSync(keyFile, 'utf8').trim()).toBe(generated);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(await runThroughUpstream(second)).toBe(`Bearer ${UPSTREAM_KEY}`);

      // A key rotated through the second app is encrypted with the same file key and used as is.
      const rotated = 'sk-upstream-ROTATED-fedcba9876543210';
      await ok(second, 'PUT', '/v1/integrations/upstream', { key: rotated }, {});
      const stored = await storedKey(second);
      expect(decryptSecret(stored.encrypted_key, Buffer.from(generated, 'hex'))).toBe(rotated);
      expect(await runThroughUpstream(second)).toBe(`Bearer ${rotated}`);
    } finally {
      await second.close();
    }

    // And a third start still reads the rotated key.
    const third = await createTestApp(env);
    try {
      expect(readFileSync(keyFile, 'utf8').trim()).toBe(generated);
      expect(await runThroughUpstream(third)).toBe('Bearer sk-upstream-ROTATED-fedcba9876543210');
    } finally {
      await third.close();
    }
  });
});
