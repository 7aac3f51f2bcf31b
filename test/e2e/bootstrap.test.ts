import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { configFrom } from '../../src/config.js';
import { createTestApp } from '../helpers/app.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bootstrap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('first start and restarts', () => {
  it('creates the defaults with the given bootstrap key, then leaves them alone; data survives a restart', async () => {
    const db = `sqlite:${join(dir, 'given.sqlite')}`;
    const first = await createTestApp({ DATABASE_URL: db, GATEWAY_BOOTSTRAP_API_KEY: 'my-bootstrap-key-1234567890' });
    expect(first.app.bootstrapResult.created).toBe(true);
    expect(first.app.bootstrapResult.generatedKey).toBeUndefined();
    const list = await first.request('GET', '/v1/admin/workspaces');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([expect.objectContaining({ slug: 'default', defaults: { is_default: 1, object: 'workspace' }, name: 'Default' })]);
    const created = await first.request('POST', '/v1/admin/workspaces', { body: { name: 'Persisted', slug: 'persisted' } });
    expect(created.status).toBe(200);
    const keys = await first.request('GET', '/v1/admin/api-keys');
    expect(keys.body.data).toEqual([expect.objectContaining({ name: 'Bootstrap key', type: 'organisation', status: 'active' })]);
    await first.close();

    // A second start, even with another bootstrap key configured, changes nothing.
    const second = await createTestApp({ DATABASE_URL: db, GATEWAY_BOOTSTRAP_API_KEY: 'another-key-that-is-ignored-1234' });
    expect(second.app.bootstrapResult).toEqual({ created: false });
    const again = await second.request('GET', '/v1/admin/workspaces', { key: 'my-bootstrap-key-1234567890' });
    expect(again.status).toBe(200);
    expect(again.body.data.map((w: { slug: string }) => w.slug)).toEqual(['default', 'persisted']);
    const ignored = await second.request('GET', '/v1/admin/workspaces', { key: 'another-key-that-is-ignored-1234' });
    expect(ignored.status).toBe(401);
    const keysAgain = await second.request('GET', '/v1/admin/api-keys', { key: 'my-bootstrap-key-1234567890' });
    expect(keysAgain.body.data).toHaveLength(1);
    await second.close();
  });

  it('without a configured key, generates a random one once, and the secret key file is owner-only', async () => {
    const db = `sqlite:${join(dir, 'random.sqlite')}`;
    const config = configFrom({ DATABASE_URL: db, LOG_LEVEL: 'silent' });
    const first = await createApp(config);
    const key = first.bootstrapResult.generatedKey!;
    expect(key).toMatch(/^gk_live_[A-Za-z0-9]{40}$/);
    const ok = await first.fetch(new Request('http://x/v1/admin/workspaces', { headers: { 'x-gateway-api-key': key } }));
    expect(ok.status).toBe(200);
    await first.close();
    expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600);

    const second = await createApp(config);
    expect(second.bootstrapResult.generatedKey).toBeUndefined();
    const stillOk = await second.fetch(new Request('http://x/v1/admin/workspaces', { headers: { 'x-gateway-api-key': key } }));
    expect(stillOk.status).toBe(200);
    await second.close();
  });
});
