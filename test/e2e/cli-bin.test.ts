/**
 * The CLI through its real entry points, as separate processes: `tsx src/cli.ts` (what
 * `npm run cli --` runs) and the package's `gatehouse` bin (`bin/gatehouse.mjs`, run through its
 * shebang as an installed bin would be). cli.test.ts covers the commands in-process; this proves
 * the entry points parse argv, print to stdout, exit with the command's status and work on the
 * database in DATABASE_URL — before any server started, and beside a running one.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_KEY } from '../helpers/app.js';
import { testEnv } from '../helpers/database.js';

const repo = resolve(import.meta.dirname, '../..');
const tsx = join(repo, 'node_modules', '.bin', 'tsx');
const bin = join(repo, 'bin', 'gatehouse.mjs');
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-bin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DATABASE_URL = `sqlite:${join(dir, 'gatehouse.sqlite')}`;
// A hermetic environment: only what the processes need, so nothing from the caller's shell
// (a GATEWAY_SECRET_KEY, another DATABASE_URL) leaks in.
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME ?? dir,
  TMPDIR: process.env.TMPDIR ?? tmpdir(),
  DATABASE_URL,
  GATEWAY_BOOTSTRAP_API_KEY: TEST_KEY,
};

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function spawn(file: string, args: string[]): Promise<Result> {
  // On PostgreSQL (TEST_DATABASE_URL), the database the test apps map this file to.
  const processEnv = await testEnv(env);
  return new Promise((done, fail) => {
    execFile(file, args, { cwd: repo, env: processEnv, timeout: 60_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return fail(new Error(`${file} ${args.join(' ')}: ${error.message}\n${stderr}`));
      done({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
    });
  });
}

/** `npm run cli -- <args>` without npm: the script's command itself. */
const npmCli = (...args: string[]) => spawn(tsx, ['src/cli.ts', ...args]);
/** The `gatehouse` bin, executed directly (shebang and executable bit). */
const gatehouse = (...args: string[]) => spawn(bin, args);

function json(result: Result): any {
  if (result.code !== 0) throw new Error(`exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

describe('the CLI entry points', () => {
  it('package.json wires both: the cli script and the gatehouse bin', () => {
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
    expect(pkg.scripts.cli).toBe('tsx src/cli.ts');
    expect(pkg.bin).toEqual({ gatehouse: 'bin/gatehouse.mjs' });
    expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(() => accessSync(bin, constants.X_OK)).not.toThrow();
  });

  // Few processes (each one loads the whole app through tsx): the commands themselves are covered
  // in-process by cli.test.ts and cli-operator.test.ts.
  it('create a workspace and a key, revoke the key; the key works against an app on the same database until then', async () => {
    // No server has ever run on this database: the CLI creates it.
    const workspace = json(await npmCli('workspaces', 'create', '--name', 'Team A', '--slug', 'team-a', '--json'));
    expect(workspace).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      slug: 'team-a',
      name: 'Team A',
      description: null,
      is_default: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });

    const created = json(await gatehouse('keys', 'create', '--name', 'ci', '--type', 'workspace', '--workspace', 'team-a', '--json'));
    expect(created).toEqual({
      id: expect.any(String),
      name: 'ci',
      type: 'workspace',
      workspace_id: workspace.id,
      key_prefix: expect.any(String),
      status: 'active',
      created_at: expect.any(String),
      revoked_at: null,
      last_used_at: null,
      key: expect.stringMatching(/^gk_live_[A-Za-z0-9]{20,}$/),
    });
    expect(created.key.startsWith(created.key_prefix)).toBe(true);

    // An app on the same file (no key cache, so a revocation by another process shows at once).
    const app = await createTestApp({ DATABASE_URL, API_KEY_CACHE_TTL_MS: 0 });
    try {
      const seen = await app.request('GET', '/v1/admin/workspaces', { key: created.key });
      expect(seen.status).toBe(200);
      expect(seen.body.data.map((w: { id: string }) => w.id)).toEqual([workspace.id]);

      // Revoked by the bin while the app runs: the app refuses the key.
      const revoked = json(await gatehouse('keys', 'revoke', created.id, '--json'));
      expect(revoked).toMatchObject({ id: created.id, status: 'revoked', revoked_at: expect.any(String) });
      const refused = await app.request('GET', '/v1/admin/workspaces', { key: created.key });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ error: { message: 'Invalid API key.', type: 'authentication_error', param: null, code: 'invalid_api_key' } });
      expect((await app.request('GET', '/v1/admin/workspaces/team-a')).body).toMatchObject({ id: workspace.id, name: 'Team A' });
    } finally {
      await app.close();
    }
  }, 180_000);

  it('exit statuses pass through both entry points: 1 for a failed command, 2 for a mistake (one line on stderr), 0 for --help', async () => {
    // One after another: each process loads the app, and a loaded machine runs three at once slowly.
    const failed = await npmCli('keys', 'revoke', 'not-a-key');
    const unknown = await gatehouse('bogus');
    const help = await gatehouse('--help');
    expect(failed).toMatchObject({ code: 1, stdout: "Error: No API key found with id 'not-a-key'.\n" });
    // One line on stderr, no stack trace.
    expect(unknown).toEqual({ code: 2, stdout: '', stderr: "Unknown command: bogus. Run 'gatehouse --help' for the commands.\n" });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: gatehouse <command> \[options\]/);
  }, 120_000);
});
