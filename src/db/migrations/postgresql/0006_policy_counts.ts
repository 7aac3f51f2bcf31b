import { Migration } from '@mikro-orm/migrations';

/**
 * The policy list's total and pages at any size: a count per workspace, status and type kept by a
 * trigger (every insert, delete or change of those columns moves it, in the writer's transaction),
 * filled from the policies already written (after the triggers exist: creating them locks out
 * writers until this transaction commits, so none is missed); and the list's indexes in its order
 * with `type` last, so a page's offset and a type filter are walked in the index alone.
 */
export class Migration0006PolicyCounts extends Migration {
  override async up(): Promise<void> {
    this.addSql("create table \"usage_policy_counts\" (\"organisation_id\" uuid not null, \"workspace_id\" uuid not null, \"status\" text check (\"status\" in ('active', 'archived')) not null, \"type\" text check (\"type\" in ('cost', 'tokens')) not null, \"policies\" int not null, constraint \"usage_policy_counts_pkey\" primary key (\"organisation_id\", \"workspace_id\", \"status\", \"type\"))");
    this.addSql("drop index \"usage_limits_policies_organisation_id_status_creat_02539_index\"");
    this.addSql("drop index \"usage_limits_policies_workspace_id_status_created_at_id_index\"");
    this.addSql("create index \"usage_limits_policies_organisation_id_status_creat_43a0b_index\" on \"usage_limits_policies\" (\"organisation_id\", \"status\", \"created_at\", \"id\", \"type\")");
    this.addSql("create index \"usage_limits_policies_organisation_id_workspace_id_cbdfd_index\" on \"usage_limits_policies\" (\"organisation_id\", \"workspace_id\", \"status\", \"created_at\", \"id\", \"type\")");
    this.addSql(`create function "usage_policy_counts_track"() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' then
    update "usage_policy_counts" set "policies" = "policies" - 1
      where "organisation_id" = old."organisation_id" and "workspace_id" = old."workspace_id" and "status" = old."status" and "type" = old."type";
  end if;
  if tg_op <> 'DELETE' then
    insert into "usage_policy_counts" ("organisation_id", "workspace_id", "status", "type", "policies")
      values (new."organisation_id", new."workspace_id", new."status", new."type", 1)
      on conflict ("organisation_id", "workspace_id", "status", "type") do update set "policies" = "usage_policy_counts"."policies" + 1;
  end if;
  return null;
end
$$`);
    this.addSql("create trigger \"usage_policy_counts_insert_delete\" after insert or delete on \"usage_limits_policies\" for each row execute function \"usage_policy_counts_track\"()");
    this.addSql("create trigger \"usage_policy_counts_update\" after update of \"organisation_id\", \"workspace_id\", \"status\", \"type\" on \"usage_limits_policies\" for each row when ((old.\"organisation_id\", old.\"workspace_id\", old.\"status\", old.\"type\") is distinct from (new.\"organisation_id\", new.\"workspace_id\", new.\"status\", new.\"type\")) execute function \"usage_policy_counts_track\"()");
    this.addSql("insert into \"usage_policy_counts\" (\"organisation_id\", \"workspace_id\", \"status\", \"type\", \"policies\") select \"organisation_id\", \"workspace_id\", \"status\", \"type\", count(*) from \"usage_limits_policies\" group by \"organisation_id\", \"workspace_id\", \"status\", \"type\"");
  }
}
