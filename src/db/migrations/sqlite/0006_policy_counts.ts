import { Migration } from '@mikro-orm/migrations';

/**
 * The policy list's total and pages at any size: a count per workspace, status and type kept by
 * triggers (every insert, delete or change of those columns moves it, in the writer's transaction),
 * filled from the policies already written; and the list's indexes in its order with `type` last,
 * so a page's offset and a type filter are walked in the index. A migration that rebuilds
 * `usage_limits_policies` (SQLite's way of changing a column) drops its triggers: it must create
 * them again.
 */
export class Migration0006PolicyCounts extends Migration {
  override async up(): Promise<void> {
    this.addSql("create table `usage_policy_counts` (`organisation_id` text not null, `workspace_id` text not null, `status` text check (`status` in ('active', 'archived')) not null, `type` text check (`type` in ('cost', 'tokens')) not null, `policies` integer not null, primary key (`organisation_id`, `workspace_id`, `status`, `type`))");
    this.addSql("drop index `usage_limits_policies_workspace_id_status_created_at_id_index`");
    this.addSql("drop index `usage_limits_policies_organisation_id_status_created_at_id_index`");
    this.addSql("create index `usage_limits_policies_organisation_id_status_created_at_id_type_index` on `usage_limits_policies` (`organisation_id`, `status`, `created_at`, `id`, `type`)");
    this.addSql("create index `usage_limits_policies_organisation_id_workspace_id_status_created_at_id_type_index` on `usage_limits_policies` (`organisation_id`, `workspace_id`, `status`, `created_at`, `id`, `type`)");
    this.addSql("create trigger `usage_policy_counts_insert` after insert on `usage_limits_policies` begin insert into `usage_policy_counts` (`organisation_id`, `workspace_id`, `status`, `type`, `policies`) values (new.`organisation_id`, new.`workspace_id`, new.`status`, new.`type`, 1) on conflict (`organisation_id`, `workspace_id`, `status`, `type`) do update set `policies` = `policies` + 1; end");
    this.addSql("create trigger `usage_policy_counts_update` after update of `organisation_id`, `workspace_id`, `status`, `type` on `usage_limits_policies` when old.`organisation_id` is not new.`organisation_id` or old.`workspace_id` is not new.`workspace_id` or old.`status` is not new.`status` or old.`type` is not new.`type` begin update `usage_policy_counts` set `policies` = `policies` - 1 where `organisation_id` = old.`organisation_id` and `workspace_id` = old.`workspace_id` and `status` = old.`status` and `type` = old.`type`; insert into `usage_policy_counts` (`organisation_id`, `workspace_id`, `status`, `type`, `policies`) values (new.`organisation_id`, new.`workspace_id`, new.`status`, new.`type`, 1) on conflict (`organisation_id`, `workspace_id`, `status`, `type`) do update set `policies` = `policies` + 1; end");
    this.addSql("create trigger `usage_policy_counts_delete` after delete on `usage_limits_policies` begin update `usage_policy_counts` set `policies` = `policies` - 1 where `organisation_id` = old.`organisation_id` and `workspace_id` = old.`workspace_id` and `status` = old.`status` and `type` = old.`type`; end");
    this.addSql("insert into `usage_policy_counts` (`organisation_id`, `workspace_id`, `status`, `type`, `policies`) select `organisation_id`, `workspace_id`, `status`, `type`, count(*) from `usage_limits_policies` group by `organisation_id`, `workspace_id`, `status`, `type`");
  }
}
