import { Migration } from '@mikro-orm/migrations';

/**
 * A collection's details as columns (src/modules/collections/collection-details.ts keeps them, in
 * every writer's transaction), filled from the collections and prompts already written.
 */
export class Migration0007CollectionDetails extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table \"collections\" add column \"child_collections_count\" int not null default 0, add column \"child_collections_last_updated_at\" timestamptz null, add column \"prompts_count\" int not null default 0, add column \"prompts_last_updated_at\" timestamptz null");
    this.addSql(
      'update "collections" set ' +
        '"child_collections_count" = (select count(*) from "collections" k where k."parent_id" = "collections"."id" and k."status" = \'active\'), ' +
        '"child_collections_last_updated_at" = (select max(k."last_updated_at") from "collections" k where k."parent_id" = "collections"."id" and k."status" = \'active\'), ' +
        '"prompts_count" = (select count(*) from "prompts" p where p."collection_id" = "collections"."id" and p."status" = \'active\'), ' +
        '"prompts_last_updated_at" = (select max(p."last_updated_at") from "prompts" p where p."collection_id" = "collections"."id" and p."status" = \'active\')',
    );
  }
}
