import { Migration } from '@mikro-orm/migrations';

/** Prompt settings (parameters, virtual key, functions and tools, metadata) on prompts and their versions, and a version's label. */
export class Migration0002PromptSettings extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table \"prompts\" add column \"parameters\" jsonb null, add column \"virtual_key\" varchar(255) null, add column \"version_description\" text null, add column \"functions\" jsonb null, add column \"tools\" jsonb null, add column \"tool_choice\" jsonb null, add column \"template_metadata\" jsonb null");
    this.addSql("alter table \"prompt_versions\" add column \"parameters\" jsonb null, add column \"virtual_key\" varchar(255) null, add column \"version_description\" text null, add column \"functions\" jsonb null, add column \"tools\" jsonb null, add column \"tool_choice\" jsonb null, add column \"template_metadata\" jsonb null, add column \"label_id\" uuid null");
  }
}
