import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { databaseOf } from '../../../src/config.js';
import { migrationNames } from '../../../src/db/migrations/files.js';
import { openOrm } from '../../../src/db/orm.js';
import { domainModules } from '../../../src/modules/index.js';
import { testDatabase } from '../../helpers/database.js';

const entities = domainModules.flatMap((m) => m.entities);
const migrations = domainModules.flatMap((m) => m.migrations ?? []);
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-migrations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('every schema change is written for both dialects, under the same names', () => {
  expect(migrationNames('postgresql')).toEqual(migrationNames('sqlite'));
  expect(migrationNames('sqlite')[0]).toBe('0001_initial');
});

// On the suite's dialect (PostgreSQL with TEST_DATABASE_URL): an entity change without its migration fails here.
it('the migrations make exactly the schema the entities describe', async () => {
  const database = await testDatabase('sqlite::memory:');
  const orm = await openOrm({ database: databaseOf({ DATABASE_URL: database.url }), entities, migrations });
  try {
    expect(await orm.schema.getUpdateSchemaSQL({ safe: false })).toBe('');
    expect(await orm.getMigrator().getPendingMigrations()).toEqual([]);
  } finally {
    await orm.close(true);
    await database.release();
  }
});

it('DB_MIGRATE=off refuses a database with pending migrations, naming them; applied, it opens', async () => {
  const database = { dialect: 'sqlite', file: join(dir, 'off.sqlite') } as const;
  await expect(openOrm({ database, entities, migrations, migrate: 'off' })).rejects.toThrow(
    /^The database needs migrations 0001_initial, .*policies_0001_index_unindexed: run `npm run migrate`/,
  );
  let applied: string[] = [];
  await (await openOrm({ database, entities, migrations, onMigrated: (names) => (applied = names) })).close(true);
  expect(applied).toEqual([...migrationNames('sqlite'), 'policies_0001_index_unindexed']);
  await (await openOrm({ database, entities, migrations, migrate: 'off', onMigrated: (names) => (applied = names) })).close(true);
  expect(applied).toEqual([]);
});
