import { createHash } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import { MikroORM, type Options } from '@mikro-orm/core';
import { PostgresDriver } from '../../src/db/postgres-driver.js';

/**
 * Where a test app's database lives. Without TEST_DATABASE_URL, where its DATABASE_URL says (each
 * app on its own in-memory SQLite database unless the test names a file). With
 * TEST_DATABASE_URL=postgres://… (a role that may create databases) every app runs on PostgreSQL
 * instead: `sqlite::memory:` becomes a fresh database of its own, copied from the migrated template
 * that test/postgres-setup.ts builds, and dropped when the app closes; `sqlite:<file>` becomes a
 * database named after the file, so apps a test opens one after the other on one file (restarts)
 * share it. test/postgres-setup.ts drops the run's databases at its end.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

/** The suite runs on PostgreSQL: tests about SQLite itself skip with `it.skipIf(onPostgres)`. */
export const onPostgres = TEST_DATABASE_URL !== undefined;

/** Every test database's name starts so; then the run's id (runs on one server at once keep apart). */
export const TEST_DATABASE_PREFIX = 'gatehouse_t_';

/** This run's id: set by test/postgres-setup.ts (global setup) before the workers start, which inherit it. */
export const RUN_ENV = 'GATEHOUSE_TEST_DATABASE_RUN';
const run = () => {
  const id = process.env[RUN_ENV];
  if (!id) throw new Error(`${RUN_ENV} is unset: test/postgres-setup.ts (vitest globalSetup) sets it when TEST_DATABASE_URL is.`);
  return id;
};
export const templateDatabase = (): string => `${TEST_DATABASE_PREFIX}${run()}_template`;

/** What every PostgreSQL test app encrypts with (PostgreSQL needs a configured key; SQLite keeps one beside its file). */
export const TEST_SECRET_KEY = '7e57'.repeat(16);

export interface TestDatabase {
  url: string;
  /** Drops a database made for one app; keeps a file's (a later app of the test may reopen it). */
  release(): Promise<void>;
}

let fresh = 0;

export async function testDatabase(url: string): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL || !url.startsWith('sqlite:')) return { url, release: async () => {} };
  const file = url.slice('sqlite:'.length);
  if (file === ':memory:') {
    // Vitest's workers are threads of one process: the thread id keeps their counters apart.
    const name = `${TEST_DATABASE_PREFIX}${run()}_${process.pid}_${threadId}_${++fresh}`;
    await adminStatement(`create database "${name}" template "${templateDatabase()}"`);
    return { url: databaseUrl(name), release: () => adminStatement(`drop database if exists "${name}" with (force)`) };
  }
  const name = `${TEST_DATABASE_PREFIX}${run()}_f_${createHash('sha256').update(file).digest('hex').slice(0, 24)}`;
  await createIfMissing(name);
  return { url: databaseUrl(name), release: async () => {} };
}

/**
 * `env` for what a test runs beside its apps on their database (the CLI, a child process): its
 * DATABASE_URL mapped as `testDatabase` maps it (one file, one PostgreSQL database), with the key
 * the test apps encrypt with. Unchanged on SQLite.
 */
export async function testEnv<T extends { DATABASE_URL?: string }>(env: T): Promise<T> {
  if (!onPostgres || env.DATABASE_URL === undefined) return env;
  const { url } = await testDatabase(env.DATABASE_URL);
  return { GATEWAY_SECRET_KEY: TEST_SECRET_KEY, ...env, DATABASE_URL: url };
}

/** TEST_DATABASE_URL's server with another database name. */
export function databaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

let admin: Promise<MikroORM> | undefined;

/** A statement on TEST_DATABASE_URL's own database (creating and dropping test databases). */
export async function adminStatement<T = unknown>(sql: string, params: unknown[] = []): Promise<T> {
  admin ??= MikroORM.init({ driver: PostgresDriver, clientUrl: TEST_DATABASE_URL, discovery: { warnWhenNoEntities: false }, pool: { min: 0, max: 2 } } as Options);
  return (await admin).em.getConnection().execute(sql, params, 'all') as Promise<T>;
}

export async function closeAdmin(): Promise<void> {
  const orm = admin;
  admin = undefined;
  if (orm) await (await orm).close(true);
}

async function createIfMissing(name: string): Promise<void> {
  const found = await adminStatement<unknown[]>('select 1 from pg_database where datname = ?', [name]);
  if (found.length > 0) return;
  try {
    await adminStatement(`create database "${name}" template "${templateDatabase()}"`);
  } catch (error) {
    // Another worker's app made it in between.
    if (!/already exists/.test(String(error))) throw error;
  }
}
