import { MikroORM, type Options } from '@mikro-orm/core';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { configFrom } from '../../src/config.js';
import { executeSql } from '../../src/db/sql.js';
import { SqliteDriver } from '../../src/db/sqlite-driver.js';
import { decryptSecret } from '../../src/lib/crypto.js';
import { onPostgres } from '../helpers/database.js';

/**
 * test/fixtures/gatehouse-0.1.0.sqlite was written by the release before versioned migrations
 * (its schema made by `updateSchema`): two workspaces, three API keys (one revoked), an
 * integration with an encrypted key and workspace access, a provider, collections and a prompt, a
 * usage policy with its bucket, a guardrail, an assistant, a thread with messages and a completed
 * run with its steps, events and enforcement record, a request log line.
 */
const FIXTURE = join(import.meta.dirname, '../fixtures/gatehouse-0.1.0.sqlite');
const BOOTSTRAP_KEY = 'gk_fixture_bootstrap_key_0123456789';
const SECRET_KEY = 'ab'.repeat(32);
const BETA = { 'OpenAI-Beta': 'assistants=v2' };

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-upgrade-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A bare connection to the file (no entities, no migrations): reads it as it is. */
async function raw<T>(file: string, work: (execute: (sql: string, params?: unknown[]) => Promise<any[]>) => Promise<T>): Promise<T> {
  const orm = await MikroORM.init({ driver: SqliteDriver, dbName: file, discovery: { warnWhenNoEntities: false } } as Options);
  try {
    return await work((sql, params = []) => orm.em.getConnection().execute(sql, params, 'all'));
  } finally {
    await orm.close(true);
  }
}

async function rowCounts(file: string): Promise<Record<string, number>> {
  return raw(file, async (execute) => {
    const tables = await execute("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'mikro_orm_%' order by name");
    const counts: Record<string, number> = {};
    for (const { name } of tables) counts[name] = (await execute(`select count(*) as n from "${name}"`))[0].n;
    return counts;
  });
}

function copyOfFixture(name: string): string {
  const file = join(dir, `${name}.sqlite`);
  copyFileSync(FIXTURE, file);
  return file;
}

const open = (file: string) => createApp(configFrom({ DATABASE_URL: `sqlite:${file}`, GATEWAY_SECRET_KEY: SECRET_KEY, LOG_LEVEL: 'silent' }));

// The fixture is a SQLite file: the SQLite pass runs this (no PostgreSQL database predates migrations).
describe.skipIf(onPostgres)('upgrading a database of the release before versioned migrations', () => {
  it('keeps every row, records the migrations, ends with the schema the entities describe, and the app works on it', async () => {
    const file = copyOfFixture('upgrade');
    const before = await rowCounts(file);
    expect(before.workspaces).toBe(2);
    const eventColumns = 'select run_id, sequence, event, data, created_at from run_events order by run_id, sequence';
    const eventsBefore = await raw(file, (execute) => execute(eventColumns));
    expect(eventsBefore.length).toBeGreaterThan(0);
    const app = await open(file);
    try {
      // Every row kept, and the policy counts (0006_policy_counts) filled from the policies there.
      expect(await rowCounts(file)).toEqual({ ...before, usage_policy_counts: 1 });
      const em = app.runtime.fork();
      const columns = 'organisation_id, workspace_id, status, type';
      expect(await executeSql(em, `select ${columns}, policies from usage_policy_counts`, [])).toEqual(
        await executeSql(em, `select ${columns}, count(*) as policies from usage_limits_policies group by ${columns}`, []),
      );
      const recorded = (await executeSql<{ name: string }[]>(em, 'select name from mikro_orm_migrations order by id', [])).map((r) => r.name);
      // Adopted at the baseline (its tables were there), then every later migration applied.
      expect(recorded[0]).toBe('0001_initial');
      expect(recorded).toContain('policies_0001_index_unindexed');
      expect(await app.runtime.orm.getMigrator().getPendingMigrations()).toEqual([]);
      expect(await app.runtime.orm.schema.getUpdateSchemaSQL({ safe: true })).toBe('');

      const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
        const response = await app.fetch(
          new Request(`http://gatehouse.test${path}`, {
            method,
            headers: { 'x-gateway-api-key': BOOTSTRAP_KEY, 'content-type': 'application/json', ...headers },
            body: body === undefined ? undefined : JSON.stringify(body),
          }),
        );
        return { status: response.status, body: await response.json() };
      };
      const workspaces = await call('GET', '/v1/admin/workspaces');
      expect(workspaces.status).toBe(200);
      expect(workspaces.body.data.map((w: { name: string }) => w.name).sort()).toEqual(['Default', 'Research']);
      const keys = await call('GET', '/v1/admin/api-keys');
      expect(keys.body.data).toHaveLength(3);
      const integration = await call('GET', '/v1/integrations/openai-prod');
      expect(integration.body).toMatchObject({ slug: 'openai-prod', masked_key: expect.stringContaining('6789') });
      const [{ encrypted_key }] = await executeSql<{ encrypted_key: string }[]>(em, "select encrypted_key from integrations where slug = 'openai-prod'", []);
      expect(decryptSecret(encrypted_key, app.runtime.secretKey)).toBe('sk-fixture-secret-0123456789');
      expect((await call('GET', '/v1/policies/usage-limits')).body.data).toHaveLength(1);
      expect((await call('GET', '/v1/guardrails')).body.data).toHaveLength(1);
      const threads = await executeSql<{ id: string }[]>(em, 'select id from threads', []);
      const messages = await call('GET', `/v1/threads/${threads[0].id}/messages`, undefined, BETA);
      expect(messages.body.data).toHaveLength(3);
      const runs = await call('GET', `/v1/threads/${threads[0].id}/runs`, undefined, BETA);
      expect(runs.body.data.map((r: { status: string }) => r.status)).toEqual(['completed']);
      // The run's event log, keyed by (run, sequence) since 0009_run_path_pages: every event kept as it was, and replayed.
      expect(await executeSql(em, eventColumns, [])).toEqual(eventsBefore);
      const replay = await app.fetch(
        new Request(`http://gatehouse.test/v1/threads/${threads[0].id}/runs/${runs.body.data[0].id}/events`, { headers: { 'x-gateway-api-key': BOOTSTRAP_KEY, ...BETA } }),
      );
      const replayed = (await replay.text()).split('\n').filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]');
      expect(replayed).toEqual(eventsBefore.map((row: { data: string }) => `data: ${row.data}`));

      // New writes on the upgraded file: a workspace, and a run on the local model to completion.
      expect((await call('POST', '/v1/admin/workspaces', { name: 'After upgrade' })).status).toBe(200);
      const assistant = runs.body.data[0].assistant_id;
      const run = await call('POST', `/v1/threads/${threads[0].id}/runs`, { assistant_id: assistant }, { ...BETA, 'x-gateway-virtual-key': 'local' });
      expect(run.status).toBe(200);
      for (let i = 0; i < 400; i++) {
        const got = await call('GET', `/v1/threads/${threads[0].id}/runs/${run.body.id}`, undefined, BETA);
        if (got.body.status === 'completed') break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect((await call('GET', `/v1/threads/${threads[0].id}/runs/${run.body.id}`, undefined, BETA)).body.status).toBe('completed');
    } finally {
      await app.close();
    }
    // A restart migrates nothing more and keeps what was written.
    const again = await open(file);
    try {
      const counts = await rowCounts(file);
      expect(counts.workspaces).toBe(3);
      expect(counts.runs).toBe(2);
    } finally {
      await again.close();
    }
  });

  it('indexes, once, the policies a database holds without index terms (the data migration)', async () => {
    const file = copyOfFixture('backfill');
    await raw(file, (execute) => execute('delete from usage_policy_terms'));
    const app = await open(file);
    await app.close();
    const terms = await raw(file, (execute) => execute('select t.policy_id from usage_policy_terms t join usage_limits_policies p on p.id = t.policy_id'));
    expect(terms.length).toBeGreaterThan(0);
    // Recorded: taking the terms away again and restarting does not run it a second time.
    await raw(file, (execute) => execute('delete from usage_policy_terms'));
    await (await open(file)).close();
    expect(await raw(file, (execute) => execute('select 1 from usage_policy_terms'))).toEqual([]);
  });
});
