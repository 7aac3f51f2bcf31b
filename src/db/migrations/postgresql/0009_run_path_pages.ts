import { Migration } from '@mikro-orm/migrations';

/**
 * Fewer index entries written per run: run events keyed by (run, sequence), what every read asks
 * for, without the serial id nothing read (its own primary-key index and sequence), and no index
 * on the tenancy of runs (organisation, workspace) or on the organisation of threads: no query
 * reads them by it. The SQLite migration of the same name says the same.
 */
export class Migration0009RunPathPages extends Migration {
  override async up(): Promise<void> {
    this.addSql("drop index \"runs_organisation_id_index\"");
    this.addSql("drop index \"runs_workspace_id_index\"");
    this.addSql("drop index \"threads_organisation_id_index\"");
    this.addSql("alter table \"run_events\" drop constraint \"run_events_pkey\"");
    this.addSql("alter table \"run_events\" drop column \"id\"");
    this.addSql("alter table \"run_events\" drop constraint \"run_events_run_id_sequence_unique\"");
    this.addSql("alter table \"run_events\" add constraint \"run_events_pkey\" primary key (\"run_id\", \"sequence\")");
  }
}
