import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands.js';
import { testEnv } from '../helpers/database.js';
import { createTestApp } from '../helpers/app.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { DATABASE_URL: `sqlite:${join(dir, 'cli.sqlite')}`, LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: 'cli-bootstrap-key-0123456789' };

async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runCli(args, await testEnv(env), (line) => lines.push(line));
  return { code, out: lines.join('\n') };
}

describe('the CLI on a brand-new database without a bootstrap key', () => {
  it('says the generated first key beside the output, so --json output stays JSON', async () => {
    const fresh = { DATABASE_URL: `sqlite:${join(dir, 'fresh.sqlite')}`, LOG_LEVEL: 'silent' };
    const out: string[] = [];
    const notices: string[] = [];
    expect(await runCli(['workspaces', 'list', '--json'], fresh, (l) => out.push(l), (l) => notices.push(l))).toBe(0);
    expect(JSON.parse(out.join('\n'))).toEqual([expect.objectContaining({ slug: 'default' })]);
    expect(notices).toEqual([expect.stringMatching(/^Created the first organisation API key \(shown only this once\): gk_live_[A-Za-z0-9]{40}$/)]);
    // Never again.
    notices.length = 0;
    expect(await runCli(['workspaces', 'list', '--json'], fresh, () => undefined, (l) => notices.push(l))).toBe(0);
    expect(notices).toEqual([]);
  });
});

describe('the CLI', () => {
  it('creates and lists workspaces and keys, and revokes keys, on the database a running server uses', async () => {
    // The server is up on the same file while the CLI works.
    const server = await createTestApp(env);
    try {
      const ws = await cli('workspaces', 'create', '--name', 'Data Team', '--slug', 'data', '--json');
      expect(ws.code).toBe(0);
      const workspace = JSON.parse(ws.out);
      expect(workspace).toMatchObject({ slug: 'data', name: 'Data Team', is_default: false });

      const list = await cli('workspaces', 'list', '--json');
      expect(JSON.parse(list.out).map((w: { slug: string }) => w.slug)).toEqual(['default', 'data']);
      expect((await cli('workspaces', 'list')).out).toContain('default  Default  (default)');

      const created = await cli('keys', 'create', '--name', 'ci', '--type', 'workspace', '--workspace', 'data', '--json');
      expect(created.code).toBe(0);
      const key = JSON.parse(created.out);
      expect(key).toMatchObject({ name: 'ci', type: 'workspace', workspace_id: workspace.id, status: 'active' });
      expect(key.key).toMatch(/^gk_live_/);

      // The running server accepts the key the CLI made, and sees the workspace.
      const seen = await server.request('GET', '/v1/admin/workspaces', { key: key.key });
      expect(seen.status).toBe(200);
      expect(seen.body.data.map((w: { slug: string }) => w.slug)).toEqual(['data']);

      const keys = JSON.parse((await cli('keys', 'list', '--json')).out);
      expect(keys.map((k: { name: string }) => k.name)).toEqual(['Bootstrap key', 'ci']);
      expect(JSON.stringify(keys)).not.toContain(key.key);

      const revoked = await cli('keys', 'revoke', key.id, '--json');
      expect(JSON.parse(revoked.out)).toMatchObject({ id: key.id, status: 'revoked' });
    } finally {
      await server.close();
    }
  });

  it('explains bad input with a non-zero exit', async () => {
    expect((await cli('keys', 'revoke', 'not-a-key')).out).toBe("Error: No API key found with id 'not-a-key'.");
    expect((await cli('keys', 'revoke', 'not-a-key')).code).toBe(1);
    expect((await cli('workspaces', 'create', '--name', '')).out).toBe("Error: 'name' must be a non-empty string.");
    const said: string[] = [];
    expect(await runCli(['bogus'], env, () => undefined, (line) => said.push(line))).toBe(2);
    expect(said).toEqual(["Unknown command: bogus. Run 'gatehouse --help' for the commands."]);
    expect((await cli('--help')).code).toBe(0);
  });
});
