import type { EntityName } from '@mikro-orm/core';
import type { Runtime } from '../runtime.js';
import { insertRows } from './bound-inserts.js';

const BATCH_SIZE = 500;
const FLUSH_INTERVAL_MS = 200;

/**
 * Rows that a request produces but need not wait for (records: the request log, guardrail
 * evaluations): queued, then inserted in batches by a timer, after the answer. `flush` writes what
 * is queued and resolves when it is in the database; a batch that fails goes to `failed` and is
 * not retried (no unbounded backlog). Bounding the queue is the owner's choice (`size`). A batch
 * is written by bound multi-row statements (bound-inserts.ts).
 */
export class BatchedInserts<T extends object> {
  private queue: T[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly runtime: Runtime,
    private readonly entity: EntityName<T>,
    private readonly failed: (error: unknown, batch: T[]) => void,
  ) {}

  get size(): number {
    return this.queue.length;
  }

  /** Queues rows (never waits, never throws). */
  push(...rows: T[]): void {
    this.queue.push(...rows);
    if (this.queue.length >= BATCH_SIZE) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flushing = this.flushing.then(async () => {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, BATCH_SIZE);
        try {
          await insertRows(this.runtime, this.entity, batch);
        } catch (error) {
          this.failed(error, batch);
        }
      }
    });
    return this.flushing;
  }
}
