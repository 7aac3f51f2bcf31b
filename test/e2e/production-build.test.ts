/**
 * The production build: `npm run build` compiles to dist/, and `node dist/server.js` (what
 * `npm run start:prod` runs) serves on plain node — no TypeScript compiler or loader at run time —
 * on a fresh SQLite file: /healthz, an authenticated API call, the OpenAPI document (which reads
 * package.json and the copied operation documents), then SIGTERM ends it with status 0.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-build-'));
const KEY = 'gk_build_test_key_0123456789';
let server: ReturnType<typeof spawn> | undefined;
afterAll(() => {
  if (server?.exitCode === null) server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function filesUnder(path: string): string[] {
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(path, entry.name)) : [join(path, entry.name)]));
}

describe('the production build', () => {
  it('npm run build compiles to dist/, and node dist/server.js serves on a fresh database', async () => {
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
    expect(pkg.scripts['start:prod']).toBe('exec node --max-semi-space-size=64 dist/server.js');

    const build = await new Promise<{ code: number; output: string }>((done) => {
      execFile('npm', ['run', 'build'], { cwd: repo, timeout: 540_000 }, (error, stdout, stderr) => done({ code: typeof error?.code === 'number' ? error.code : error ? 1 : 0, output: stdout + stderr }));
    });
    expect(build.code, build.output).toBe(0);

    const js = filesUnder(join(repo, 'dist')).filter((file) => file.endsWith('.js'));
    expect(js).toContain(join(repo, 'dist', 'server.js'));
    expect(js).toContain(join(repo, 'dist', 'src', 'app.js'));
    // Nothing compiled imports a TypeScript loader or a .ts file.
    const offenders = js.filter((file) => /from ['"](tsx|typescript)(\/[^'"]*)?['"]|import\(['"]tsx|from ['"][^'"]+\.ts['"]/.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);

    server = spawn(process.execPath, [join(repo, 'dist', 'server.js')], {
      cwd: dir,
      env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${join(dir, 'gatehouse.sqlite')}`, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', GATEWAY_BOOTSTRAP_API_KEY: KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((done) => server!.on('exit', (code) => done(code)));
    server.stderr!.on('data', (chunk) => (output += chunk));
    const port = await new Promise<number>((done, fail) => {
      server!.stdout!.on('data', (chunk) => {
        output += chunk;
        const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
        if (listening) done(Number(listening[1]));
      });
      void exited.then((code) => fail(new Error(`dist/server.js exited ${code}:\n${output}`)));
    });
    const base = `http://127.0.0.1:${port}`;

    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    const workspaces = await fetch(`${base}/v1/admin/workspaces`, { headers: { 'x-gateway-api-key': KEY } });
    expect(workspaces.status).toBe(200);
    expect((await workspaces.json()).data.map((w: { slug: string }) => w.slug)).toEqual(['default']);

    const openapi = await fetch(`${base}/v1/openapi.json`);
    expect(openapi.status).toBe(200);
    expect(await openapi.json()).toMatchObject({ openapi: '3.1.0', info: { version: pkg.version } });

    server.kill('SIGTERM');
    expect(await exited, output).toBe(0);
  }, 600_000);
});
