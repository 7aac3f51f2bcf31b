/**
 * The deployment files, checked statically: no Docker engine runs here, so this does not prove an
 * image builds or the stack starts. It holds the Dockerfile and docker-compose.yml to what README
 * promises (multi-stage, non-root, a health check on /healthz, the production build; PostgreSQL
 * and two gateway instances behind the load balancer, configured from the environment) and keeps
 * them from drifting from the repository (copied paths exist, the environment is a valid
 * configuration, the load balancer names both instances).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { root } from '../helpers/source-files.js';

const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Dockerfile instructions, continuation lines joined, comments dropped. */
function instructions(text: string): Array<{ op: string; args: string }> {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [op, ...rest] = line.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

describe('Dockerfile', () => {
  const all = instructions(read('Dockerfile'));
  const stages = all.reduce<Array<typeof all>>((out, i) => (i.op === 'FROM' ? [...out, [i]] : (out.at(-1)!.push(i), out)), []);
  const final = stages.at(-1)!;

  it('builds in one stage and runs the compiled server in another, as a user other than root', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages[0][0].args).toMatch(/ AS build$/);
    expect(stages[0].some((i) => i.op === 'RUN' && i.args.includes('npm run build'))).toBe(true);
    expect(final.filter((i) => i.op === 'COPY').every((i) => i.args.startsWith('--from=build '))).toBe(true);
    const users = final.filter((i) => i.op === 'USER').map((i) => i.args);
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    expect(final.find((i) => i.op === 'CMD')?.args).toBe('["node", "--max-semi-space-size=64", "dist/server.js"]');
    expect(JSON.parse(read('package.json')).scripts['start:prod']).toBe('exec node --max-semi-space-size=64 dist/server.js');
  });

  it('checks its health on /healthz at the port it listens on', () => {
    const health = final.find((i) => i.op === 'HEALTHCHECK')?.args ?? '';
    expect(health).toContain('/healthz');
    expect(health).toContain('process.env.PORT');
    expect(final.find((i) => i.op === 'EXPOSE')?.args).toBe('8787');
  });

  it('copies only what exists, and ignores build output and local data', () => {
    const copied = stages[0]
      .filter((i) => i.op === 'COPY')
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1))
      .filter((path) => !path.startsWith('--'));
    expect(copied.length).toBeGreaterThan(5);
    expect(copied.filter((path) => !existsSync(join(root, path)))).toEqual([]);
    const ignored = read('.dockerignore').split('\n');
    for (const path of ['node_modules', 'dist', 'data', '.git']) expect(ignored).toContain(path);
  });
});

describe('docker-compose.yml', () => {
  // Compose reads YAML merge keys (`<<: *gateway`).
  const compose = parse(read('docker-compose.yml'), { merge: true });
  const gateways = ['gateway-a', 'gateway-b'];

  it('runs PostgreSQL, two gateway instances from this image and a load balancer', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['gateway-a', 'gateway-b', 'lb', 'postgres']);
    expect(compose.services.postgres.image).toMatch(/^postgres:/);
    expect(compose.services.postgres.healthcheck.test.join(' ')).toContain('pg_isready');
    for (const name of gateways) {
      const gateway = compose.services[name];
      expect(gateway.build, name).toBe('.');
      expect(gateway.depends_on.postgres.condition).toBe('service_healthy');
      expect(gateway.environment.DATABASE_URL).toMatch(/^postgres:\/\/gatehouse:.*@postgres:5432\/gatehouse$/);
    }
    expect(compose.services['gateway-a'].environment).toEqual(compose.services['gateway-b'].environment);
    expect(compose.services.lb.depends_on).toEqual({ 'gateway-a': { condition: 'service_healthy' }, 'gateway-b': { condition: 'service_healthy' } });
    expect(compose.services.lb.ports).toEqual(['${GATEHOUSE_PORT:-8787}:8787']);
  });

  it('takes the secrets from the environment, and its gateway environment is a valid configuration', () => {
    const environment: Record<string, string> = compose.services['gateway-a'].environment;
    for (const name of ['GATEWAY_SECRET_KEY', 'GATEWAY_BOOTSTRAP_API_KEY']) expect(environment[name]).toMatch(new RegExp(`^\\$\\{${name}:\\?`));
    expect(environment.DATABASE_URL).toContain('${POSTGRES_PASSWORD:?');
    // What compose would pass with these set in the shell.
    const shell: Record<string, string> = { GATEWAY_SECRET_KEY: 'ab'.repeat(32), GATEWAY_BOOTSTRAP_API_KEY: 'gk_live_0123456789abcdef0123', POSTGRES_PASSWORD: 'pw' };
    // `${NAME:?message}` needs NAME; `${NAME:-fallback}` falls back.
    const substitute = (value: string) =>
      value.replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_match, name: string, kind: string | undefined, fallback: string) => {
        if (shell[name] !== undefined) return shell[name];
        if (kind === '-') return fallback;
        throw new Error(`compose needs ${name} from the environment`);
      });
    const resolved = Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, substitute(String(value))]));
    const loaded = loadConfig(resolved);
    expect(loaded.ok ? [] : loaded.problems).toEqual([]);
    expect(loaded.ok && loaded.config.DATABASE_URL).toBe('postgres://gatehouse:pw@postgres:5432/gatehouse');
  });

  it('balances over both instances with deploy/nginx.conf, streams unbuffered', () => {
    expect(compose.services.lb.volumes).toEqual(['./deploy/nginx.conf:/etc/nginx/nginx.conf:ro']);
    const nginx = read('deploy/nginx.conf');
    const upstream = /upstream gatehouse \{([^}]*)\}/.exec(nginx)?.[1] ?? '';
    expect([...upstream.matchAll(/server ([\w-]+):8787/g)].map((m) => m[1])).toEqual(gateways);
    expect(nginx).toMatch(/listen 8787;/);
    expect(nginx).toMatch(/proxy_pass http:\/\/gatehouse;/);
    expect(nginx).toMatch(/proxy_buffering off;/);
    // A POST that reached an instance is never retried on the other.
    expect(nginx).not.toMatch(/^\s*proxy_next_upstream\s[^;]*non_idempotent/m);
  });
});
