import { Migration } from '@mikro-orm/migrations';

/**
 * A version of each collection's level of children (`children_version`), kept by the database:
 * every insert and delete of a collection, and every update of one that leaves its own
 * `children_version` as it was, bumps its parent's, and a move its old and new parent's. An update
 * that changes `children_version` bumps nothing: the bumps are such updates (they must not bump
 * again), and nothing else writes the column (the entity maps it lazy, never written back).
 * Triggers see every write, by this process, another one or raw SQL, so a reader that kept a
 * level confirms it unchanged by the version alone (src/modules/collections/collection-loaders.ts,
 * childCollectionsOf).
 */
export class Migration0012CollectionChildrenVersion extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "collections" add column "children_version" int not null default 0');
    this.addSql(`create function "collections_children_version"() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' and old."parent_id" is not null then
    update "collections" set "children_version" = "children_version" + 1 where "id" = old."parent_id";
  end if;
  if tg_op <> 'DELETE' and new."parent_id" is not null and (tg_op = 'INSERT' or new."parent_id" is distinct from old."parent_id") then
    update "collections" set "children_version" = "children_version" + 1 where "id" = new."parent_id";
  end if;
  return null;
end
$$`);
    this.addSql(
      'create trigger "collections_children_version_insert_delete" after insert or delete on "collections" ' +
        'for each row execute function "collections_children_version"()',
    );
    // The bumps are updates too: the condition stops them from bumping again.
    this.addSql(
      'create trigger "collections_children_version_update" after update on "collections" ' +
        'for each row when (new."children_version" = old."children_version") execute function "collections_children_version"()',
    );
  }
}
