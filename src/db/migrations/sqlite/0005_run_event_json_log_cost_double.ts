import { Migration } from '@mikro-orm/migrations';

/**
 * A request's cost as a double (PostgreSQL's `real` kept 6 digits; SQLite's REAL already has 8 bytes,
 * the table is rebuilt only because its declared type changes), and, on PostgreSQL, run events'
 * data as `json`, which keeps an event's text as written, where `jsonb` reordered its keys, so a
 * replayed event differed from the live one.
 */
export class Migration0005RunEventJsonLogCostDouble extends Migration {
  override async up(): Promise<void> {
    this.addSql("pragma foreign_keys = off");
    this.addSql("create table `request_logs__temp_alter` (`id` text not null, `created_at` datetime not null, `organisation_id` text not null, `workspace_id` text not null, `api_key_id` text null, `virtual_key` text null, `provider` text null, `model` text null, `route` text not null, `status` integer not null, `stream` integer not null, `prompt_tokens` integer not null, `completion_tokens` integer not null, `total_tokens` integer not null, `cost` double not null, `total_ms` real not null, `upstream_ms` real null, `request_id` text null, `run_id` text null, `metadata` json not null, `guardrails` json not null, `refusal` text null, primary key (`id`))");
    this.addSql("insert into `request_logs__temp_alter` select `id`, `created_at`, `organisation_id`, `workspace_id`, `api_key_id`, `virtual_key`, `provider`, `model`, `route`, `status`, `stream`, `prompt_tokens`, `completion_tokens`, `total_tokens`, `cost`, `total_ms`, `upstream_ms`, `request_id`, `run_id`, `metadata`, `guardrails`, `refusal` from `request_logs`");
    this.addSql("drop table `request_logs`");
    this.addSql("alter table `request_logs__temp_alter` rename to `request_logs`");
    this.addSql("create index `request_logs_organisation_id_created_at_index` on `request_logs` (`organisation_id`, `created_at`)");
    this.addSql("create index `request_logs_workspace_id_created_at_index` on `request_logs` (`workspace_id`, `created_at`)");
    this.addSql("pragma foreign_keys = on");
  }
}
