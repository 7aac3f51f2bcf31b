/**
 * Creates that generate a slug, sent 30 at a time, get the same slugs as one at a time would
 * (`race-int`, `race-int-2`, …): never a 409. On an in-memory and on a file database.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const N = 30;
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-slugs-'));
const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `base`, `base-2`, … `base-n` in any order. */
function numbered(base: string, from: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => (i + from === 1 ? base : `${base}-${i + from}`)).sort();
}

async function createAtOnce(t: TestApp, path: string, body: Record<string, unknown>): Promise<string[]> {
  const responses = await Promise.all(Array.from({ length: N }, () => t.request('POST', path, { body })));
  expect(responses.map((r) => r.status)).toEqual(Array(N).fill(200));
  return responses.map((r) => r.body.slug as string).sort();
}

describe.each([
  ['memory', () => ({})],
  ['file', () => ({ DATABASE_URL: `sqlite:${join(dir, 'races.sqlite')}` })],
])('%s database: 30 concurrent creates with a generated slug', (_db, env) => {
  let t: TestApp;
  it('integrations', async () => {
    t = await createTestApp(env());
    apps.push(t);
    expect(await createAtOnce(t, '/v1/integrations', { name: 'Race Int', ai_provider_id: 'local' })).toEqual(numbered('race-int', 1, N));
  });

  it('providers (the default workspace already has `local`)', async () => {
    expect(await createAtOnce(t, '/v1/providers', { integration_id: 'local' })).toEqual(numbered('local', 2, N));
  });

  it('collections', async () => {
    expect(await createAtOnce(t, '/v1/collections', { name: 'Race Col' })).toEqual(numbered('race-col', 1, N));
  });

  it('workspaces', async () => {
    const slugs = await createAtOnce(t, '/v1/admin/workspaces', { name: 'Race Ws' });
    expect(slugs).toEqual(numbered('race-ws', 1, N));
  });
});
