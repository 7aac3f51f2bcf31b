import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';

/** When the checkpointer looks at the WAL, and the bounds it keeps the WAL under. */
export interface WalCheckpointOptions {
  intervalMs: number;
  /** A WAL file larger than this is emptied and truncated by the worker. */
  truncateBytes: number;
  /**
   * The serving connection's own automatic checkpoint, kept as a backstop at this many pages of
   * WAL (0: none): it only fires when the worker has not kept up (a load that never lets its
   * checkpoint catch up, a starved thread), and then bounds the WAL as SQLite does by default.
   */
  backstopPages: number;
}

/**
 * Every 100 ms; past 4 MiB (SQLite's own automatic checkpoint runs at 1,000 pages, 4 MiB with its
 * default page size) the WAL file is emptied and truncated; the commit that takes the WAL past
 * 4,000 pages (16 MiB) checkpoints itself.
 */
export const WAL_CHECKPOINT: WalCheckpointOptions = { intervalMs: 100, truncateBytes: 4 * 1024 * 1024, backstopPages: 4000 };

/** The part of a better-sqlite3 connection the checkpointer uses. */
interface Connection {
  name: string;
  memory: boolean;
  open: boolean;
  pragma(source: string): unknown;
}

/** SQLite's default automatic checkpoint threshold in pages, restored if the checkpointer stops by itself. */
const AUTOCHECKPOINT_PAGES = 1000;

/**
 * The worker's program (CommonJS, evaluated: no loader needed under tsx, vitest or a build). Every
 * `intervalMs` a PASSIVE checkpoint copies the WAL's committed frames into the database file
 * without waiting for or blocking any reader or writer; once the WAL is fully copied the next
 * writer starts it again from its beginning, so under ordinary load it stops growing. A WAL file
 * left larger than `truncateBytes` (a burst, or a load that never let a checkpoint catch up) is
 * emptied with a TRUNCATE checkpoint: that one needs a moment without writers and holds their lock
 * while it copies what PASSIVE left (little) and truncates; with a busy timeout of 0 it gives up at
 * once when a writer is active and is tried again at the next tick. On 'stop' the worker closes
 * its connection before exiting, so the serving connection's close can be the last one and
 * checkpoint the rest (SQLite then deletes the WAL).
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.driver);
const { file, intervalMs, truncateBytes } = workerData;
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const walSize = () => { try { return statSync(file + '-wal').size; } catch { return 0; } };
const tick = () => {
  if (walSize() === 0) return;
  db.pragma('wal_checkpoint(PASSIVE)');
  if (walSize() > truncateBytes) db.pragma('wal_checkpoint(TRUNCATE)');
};
const timer = setInterval(tick, intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');

export interface WalCheckpointer {
  /** Stops the worker and closes its connection; resolves once the thread has exited. */
  stop(): Promise<void>;
}

/**
 * Moves WAL checkpoints off the request path for a file database: SQLite's automatic checkpoint
 * runs inside the COMMIT that crosses its threshold, on the main thread (better-sqlite3 is
 * synchronous), which made commit p99 ~40 ms. On `db` it is moved to a backstop far past SQLite's
 * default threshold, and a worker thread with its own connection to the same file checkpoints
 * instead (WORKER), so the WAL is copied and starts again long before it reaches the backstop.
 * In-memory and temporary databases have no WAL: nothing is started for them (undefined). Should
 * the worker stop by itself (an error), `db` checkpoints at SQLite's default threshold again.
 */
export function startWalCheckpointer(db: Connection, given: Partial<WalCheckpointOptions> = {}): WalCheckpointer | undefined {
  if (db.memory || db.name === '') return undefined;
  const options = { ...WAL_CHECKPOINT, ...given };
  db.pragma(`wal_autocheckpoint = ${options.backstopPages}`);
  const { intervalMs, truncateBytes } = options;
  const worker = new Worker(WORKER, { eval: true, workerData: { driver: driverPath, file: resolve(db.name), intervalMs, truncateBytes } });
  // A connection never closed must not keep the process alive.
  worker.unref();
  let stopping = false;
  const exited = new Promise<void>((done) => worker.once('exit', () => done()));
  worker.on('error', () => {
    // Reported by 'exit' below; the serving connection checkpoints by itself from then on.
  });
  worker.once('exit', () => {
    if (!stopping && db.open) db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  });
  return {
    async stop() {
      stopping = true;
      // Held until it has exited: a process ending with this close would otherwise not wait for it.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
