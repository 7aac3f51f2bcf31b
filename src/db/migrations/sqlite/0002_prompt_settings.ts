import { Migration } from '@mikro-orm/migrations';

/** Prompt settings (parameters, virtual key, functions and tools, metadata) on prompts and their versions, and a version's label. */
export class Migration0002PromptSettings extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table `prompts` add column `parameters` json null");
    this.addSql("alter table `prompts` add column `virtual_key` text null");
    this.addSql("alter table `prompts` add column `version_description` text null");
    this.addSql("alter table `prompts` add column `functions` json null");
    this.addSql("alter table `prompts` add column `tools` json null");
    this.addSql("alter table `prompts` add column `tool_choice` json null");
    this.addSql("alter table `prompts` add column `template_metadata` json null");
    this.addSql("alter table `prompt_versions` add column `parameters` json null");
    this.addSql("alter table `prompt_versions` add column `virtual_key` text null");
    this.addSql("alter table `prompt_versions` add column `version_description` text null");
    this.addSql("alter table `prompt_versions` add column `functions` json null");
    this.addSql("alter table `prompt_versions` add column `tools` json null");
    this.addSql("alter table `prompt_versions` add column `tool_choice` json null");
    this.addSql("alter table `prompt_versions` add column `template_metadata` json null");
    this.addSql("alter table `prompt_versions` add column `label_id` text null");
  }
}
