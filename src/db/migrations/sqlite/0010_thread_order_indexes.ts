import { Migration } from '@mikro-orm/migrations';

/**
 * A thread's messages and runs, and a workspace's threads, each under one index in the order they
 * are read (`… where thread_id = ? order by ordinal`, `… where workspace_id = ? order by ordinal`,
 * with a cursor on the ordinal), where a parent index and an ordinal index were two entries
 * (on SQLite two pages) written per row.
 */
export class Migration0010ThreadOrderIndexes extends Migration {
  override async up(): Promise<void> {
    this.addSql("drop index `thread_messages_ordinal_index`");
    this.addSql("drop index `thread_messages_thread_id_index`");
    this.addSql("create index `thread_messages_thread_id_ordinal_index` on `thread_messages` (`thread_id`, `ordinal`)");
    this.addSql("drop index `runs_ordinal_index`");
    this.addSql("drop index `runs_thread_id_index`");
    this.addSql("create index `runs_thread_id_ordinal_index` on `runs` (`thread_id`, `ordinal`)");
    this.addSql("drop index `threads_ordinal_index`");
    this.addSql("drop index `threads_workspace_id_index`");
    this.addSql("create index `threads_workspace_id_ordinal_index` on `threads` (`workspace_id`, `ordinal`)");
  }
}
