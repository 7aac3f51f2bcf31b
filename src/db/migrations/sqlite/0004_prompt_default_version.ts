import { Migration } from '@mikro-orm/migrations';

/** A prompt's default version (Portkey's makeDefault); null: the latest. */
export class Migration0004PromptDefaultVersion extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table `prompts` add column `default_version` integer null");
  }
}
