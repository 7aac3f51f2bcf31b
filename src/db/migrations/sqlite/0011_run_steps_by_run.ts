import { Migration } from '@mikro-orm/migrations';

/**
 * No index on the thread of run steps: a thread's steps are its runs', deleted with them by run
 * (deleteThread), and nothing else reads steps by thread; the index was an entry (on SQLite a
 * page) written per step.
 */
export class Migration0011RunStepsByRun extends Migration {
  override async up(): Promise<void> {
    this.addSql("drop index `run_steps_thread_id_index`");
  }
}
