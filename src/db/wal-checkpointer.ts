import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';

/** When the checkpointer looks at the WAL, and the bounds the WAL is kept under. */
export interface WalCheckpointOptions {
  intervalMs: number;
  /** Pages of WAL past which the worker makes sure the next write starts it again (see WORKER). */
  restartPages: number;
  /**
   * The WAL file is cut back to this size when the serving connection starts it again from its
   * beginning (SQLite's journal_size_limit): a passive checkpoint copies the WAL but never shrinks
   * its file, and a truncating one from another connection would change the serving connection's
   * `data_version` (see WORKER).
   */
  sizeLimitBytes: number;
  /**
   * The serving connection's own automatic checkpoint, kept as a backstop at this many pages of
   * WAL (0: none): it only fires when the worker has not kept up (a load that never lets its
   * checkpoint catch up, a starved thread), and then bounds the WAL as SQLite does by default.
   */
  backstopPages: number;
}

/**
 * Every 250 ms. The WAL is started again past 1,000 pages and its file cut back to 4 MiB (SQLite's
 * own automatic checkpoint runs at 1,000 pages, 4 MiB with its default page size); the commit that
 * takes the WAL past 4,000 pages (16 MiB) checkpoints itself.
 */
export const WAL_CHECKPOINT: WalCheckpointOptions = { intervalMs: 250, restartPages: 1000, sizeLimitBytes: 4 * 1024 * 1024, backstopPages: 4000 };

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
 * without waiting for or blocking any reader or writer (with its syncs, ~10 ms even for a few
 * frames on this project's 2-core VM, 30 ms for 1,000). The serving connection starts the WAL
 * again from its beginning (cutting its file back to journal_size_limit) only if its next write
 * finds it all copied, which a load committing while the checkpoint runs rarely allows; so past
 * `restartPages` a RESTART follows: it takes the write lock for what PASSIVE left (the frames of
 * the few commits meanwhile), and the next write starts the WAL again. Writers asking for the lock
 * meanwhile wait for it without blocking the thread (sqlite-driver.ts). With a busy timeout of 0
 * it gives up at once when a writer is active, and is tried again at the next tick.
 * Never TRUNCATE: measured (better-sqlite3, SQLite 3.4x), PASSIVE and RESTART checkpoints from
 * another connection leave the serving connection's `PRAGMA data_version` as it was, where a
 * TRUNCATE one moves it as a commit by another process does — and the config cache
 * (src/lib/config-cache.ts) drops everything when it moves. On 'stop' the worker closes its
 * connection before exiting, so the serving connection's close can be the last one and checkpoint
 * the rest (SQLite then deletes the WAL).
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const { file, intervalMs, restartPages } = workerData;
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const tick = () => {
  try {
    const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)');
    if (log >= restartPages) db.pragma('wal_checkpoint(RESTART)');
  } catch (error) {
    // Another connection's lock or checkpoint (SQLITE_BUSY, _RECOVERY, _SNAPSHOT, SQLITE_LOCKED): next tick.
    if (!/^SQLITE_(BUSY|LOCKED)/.test(error.code)) throw error;
  }
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
 * synchronous): commit p99 ~10–40 ms, max 85 ms under bench/runpath. On `db` it is moved to a
 * backstop far past SQLite's default threshold, and a worker thread with its own connection to the
 * same file checkpoints instead (WORKER), so the WAL is copied and starts again long before it
 * reaches the backstop. In-memory and temporary databases have no WAL: nothing is started for them
 * (undefined). Should the worker stop by itself (an error), `db` checkpoints at SQLite's default
 * threshold again.
 */
export function startWalCheckpointer(db: Connection, given: Partial<WalCheckpointOptions> = {}): WalCheckpointer | undefined {
  if (db.memory || db.name === '') return undefined;
  const options = { ...WAL_CHECKPOINT, ...given };
  db.pragma(`journal_size_limit = ${options.sizeLimitBytes}`);
  db.pragma(`wal_autocheckpoint = ${options.backstopPages}`);
  const worker = new Worker(WORKER, { eval: true, workerData: { driver: driverPath, file: resolve(db.name), intervalMs: options.intervalMs, restartPages: options.restartPages } });
  // A connection never closed must not keep the process alive.
  worker.unref();
  let stopping = false;
  const exited = new Promise<void>((done) => worker.once('exit', () => done()));
  worker.on('error', (error) => {
    // The serving connection checkpoints by itself from then on ('exit' below).
    if (process.env.GATEHOUSE_DEBUG_WAL) console.error('WAL checkpointer stopped:', error);
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
