import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { openOrm, type Orm } from '../../../src/db/orm.js';
import { dataVersion, executeSql } from '../../../src/db/sql.js';
import type { WalCheckpointOptions } from '../../../src/db/wal-checkpointer.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-wal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SIZE_LIMIT = 256 * 1024;
/** Bound on the WAL file under steady writes with a backstop of 64 pages (256 KiB): that and the frames of the commit crossing it. */
const WAL_BOUND = 1024 * 1024;
/** A checkpointer that never looks: what the serving connection alone would do. */
const NEVER = 2 ** 30;
const WRITES = 3_000;
/** ~1 KiB a row: 3,000 rows write ~3 MiB of WAL, several times the bound. */
const PAYLOAD = 'x'.repeat(1024);

async function open(file: string, walCheckpoint?: Partial<WalCheckpointOptions>): Promise<Orm> {
  const orm = await openOrm({ database: { dialect: 'sqlite', file }, entities: [], walCheckpoint });
  await executeSql(orm.em.fork(), 'create table if not exists t (id integer primary key, v text)', [], 'run');
  return orm;
}

const walSize = (file: string) => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
const autocheckpoint = async (orm: Orm) => (await executeSql<{ wal_autocheckpoint: number }[]>(orm.em.fork(), 'pragma wal_autocheckpoint', []))[0].wal_autocheckpoint;
const count = async (orm: Orm) => (await executeSql<{ n: number }[]>(orm.em.fork(), 'select count(*) as n from t', []))[0].n;

/** Writes WRITES rows one by one (each its own commit) and returns the largest WAL file size seen. */
async function writeSteadily(orm: Orm, file: string): Promise<number> {
  let largest = 0;
  for (let i = 0; i < WRITES; i++) {
    await executeSql(orm.em.fork(), 'insert into t (v) values (?)', [PAYLOAD], 'run');
    if (i % 50 === 0) largest = Math.max(largest, walSize(file));
  }
  return Math.max(largest, walSize(file));
}

it('an in-memory database keeps SQLite’s automatic checkpoint and starts no checkpointer', async () => {
  const orm = await open(':memory:');
  try {
    expect(await autocheckpoint(orm)).toBe(1000);
  } finally {
    await orm.close(true);
  }
});

it('a file database checkpoints off the request path: the worker copies the WAL, the next write starts it again and cuts its file back', async () => {
  const file = join(dir, 'steady.sqlite');
  // No backstop: every checkpoint is the worker's.
  const orm = await open(file, { intervalMs: 5, restartPages: 64, sizeLimitBytes: SIZE_LIMIT, backstopPages: 0 });
  try {
    // A commit never checkpoints.
    expect(await autocheckpoint(orm)).toBe(0);
    expect(await writeSteadily(orm, file)).toBeGreaterThan(0);
    // Once the writes pause, the worker copies it all; the next write starts the WAL again, cut back to the limit.
    await vi.waitFor(
      async () => {
        await executeSql(orm.em.fork(), 'insert into t (v) values (?)', ['after'], 'run');
        expect(walSize(file)).toBeLessThanOrEqual(SIZE_LIMIT);
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(await count(orm)).toBeGreaterThan(WRITES);
  } finally {
    await orm.close(true);
  }
});

it("the worker's checkpoints leave the serving connection's data_version as it was; another connection's commit moves it", async () => {
  // The config cache (src/lib/config-cache.ts) drops everything when data_version moves.
  const file = join(dir, 'data-version.sqlite');
  // A WAL started again is cut back to its last commit's frames, so each start shows as a smaller file.
  const orm = await open(file, { intervalMs: 1, restartPages: 16, sizeLimitBytes: 0, backstopPages: 0 });
  try {
    const em = orm.em.fork();
    const version = await dataVersion(em);
    // Writes until the worker's checkpoints have had the WAL started again three times.
    let restarts = 0;
    let size = 0;
    await vi.waitFor(
      async () => {
        for (let i = 0; i < 50; i++) {
          await executeSql(em, 'insert into t (v) values (?)', [PAYLOAD], 'run');
          if (walSize(file) < size) restarts++;
          size = walSize(file);
          expect(await dataVersion(em)).toBe(version);
        }
        expect(restarts).toBeGreaterThanOrEqual(3);
      },
      { timeout: 20_000, interval: 1 },
    );
    const other = await open(file);
    await executeSql(other.em.fork(), 'insert into t (v) values (?)', ['other'], 'run');
    await other.close(true);
    expect(await dataVersion(em)).not.toBe(version);
  } finally {
    await orm.close(true);
  }
});

it('under a write load the worker does not keep up with, the backstop bounds the WAL', async () => {
  const file = join(dir, 'backstop.sqlite');
  const orm = await open(file, { intervalMs: NEVER, backstopPages: 64 });
  try {
    expect(await autocheckpoint(orm)).toBe(64);
    expect(await writeSteadily(orm, file)).toBeLessThan(WAL_BOUND);
  } finally {
    await orm.close(true);
  }
});

it('without checkpoints the WAL grows past that bound, and close checkpoints it all: the WAL is gone and no handle is left', async () => {
  const file = join(dir, 'stopped.sqlite');
  const ports = () => process.getActiveResourcesInfo().filter((name) => name === 'MessagePort').length;
  const before = ports();
  // Neither the worker nor the backstop: the WAL only grows.
  const orm = await open(file, { intervalMs: NEVER, backstopPages: 0 });
  expect(await writeSteadily(orm, file)).toBeGreaterThan(WAL_BOUND);
  // close() resolves once the worker has exited and closed its connection, so the serving
  // connection's close is the last and checkpoints everything (SQLite then deletes the WAL).
  await orm.close(true);
  expect(existsSync(`${file}-wal`)).toBe(false);
  expect(ports()).toBe(before);

  const again = await open(file);
  try {
    expect(await count(again)).toBe(WRITES);
  } finally {
    await again.close(true);
  }
});

it('two apps on one file each checkpoint, write and close', async () => {
  const file = join(dir, 'shared.sqlite');
  const first = await open(file, { intervalMs: 5, sizeLimitBytes: SIZE_LIMIT });
  const second = await open(file, { intervalMs: 5, sizeLimitBytes: SIZE_LIMIT });
  try {
    for (let i = 0; i < 200; i++) await executeSql((i % 2 ? first : second).em.fork(), 'insert into t (v) values (?)', [PAYLOAD], 'run');
    expect(await count(first)).toBe(200);
    expect(await count(second)).toBe(200);
  } finally {
    await first.close(true);
    await second.close(true);
  }
  expect(existsSync(`${file}-wal`)).toBe(false);
});
