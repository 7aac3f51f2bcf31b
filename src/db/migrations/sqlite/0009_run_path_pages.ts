import { Migration } from '@mikro-orm/migrations';

/**
 * Fewer pages written per run (each is a WAL frame at commit and a page the next checkpoint
 * copies and syncs): run events keyed by (run, sequence), what every read asks for, without the
 * AUTOINCREMENT id nothing read (its `sqlite_sequence` row was rewritten by every transaction
 * that appended events; SQLite changes a table's key only by rebuilding it, as 0005 did), and no
 * index on the tenancy of runs (organisation, workspace) or on the organisation of threads:
 * no query reads them by it. A streamed run wrote ~47 pages, ~41 after this.
 */
export class Migration0009RunPathPages extends Migration {
  override async up(): Promise<void> {
    this.addSql("pragma foreign_keys = off");
    this.addSql("create table `run_events__temp_alter` (`run_id` text not null, `sequence` integer not null, `event` text not null, `data` json not null, `created_at` datetime not null, primary key (`run_id`, `sequence`))");
    this.addSql("insert into `run_events__temp_alter` select `run_id`, `sequence`, `event`, `data`, `created_at` from `run_events` order by `id`");
    this.addSql("drop table `run_events`");
    this.addSql("alter table `run_events__temp_alter` rename to `run_events`");
    this.addSql("pragma foreign_keys = on");
    this.addSql("drop index `runs_organisation_id_index`");
    this.addSql("drop index `runs_workspace_id_index`");
    this.addSql("drop index `threads_organisation_id_index`");
  }
}
