import { randomUUID } from 'node:crypto';

/**
 * The gateway instances sharing one database. Runs are claimed with leases written under `id`
 * (src/modules/runs/run-lease.ts); periodic sweeps run only where `leads()` is true, so each
 * sweep runs on one instance at a time. On PostgreSQL this is the bus (src/lib/pg-bus.ts: an
 * advisory lock held by one instance's connection); on SQLite, one process per database file,
 * this process alone.
 */
export interface Instances {
  /** This instance, as written in the leases it holds. */
  readonly id: string;
  /** No other process uses the database (SQLite): whatever a start finds unfinished was left behind. */
  readonly alone: boolean;
  /** True when this instance runs the sweeps now. */
  leads(): Promise<boolean>;
}

export const singleInstance: Instances = {
  id: randomUUID(),
  alone: true,
  leads: async () => true,
};
