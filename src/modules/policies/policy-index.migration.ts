import type { MigrationObject } from '@mikro-orm/core';
import { Migration } from '@mikro-orm/migrations';
import { indexUnindexedPolicies } from './policy-index.js';

/**
 * Policies written before the term index existed get their terms, once per database (recorded
 * with the schema migrations), in the migration's transaction.
 */
class IndexUnindexedPolicies extends Migration {
  override async up(): Promise<void> {
    await indexUnindexedPolicies(this.getEntityManager());
  }
}

export const policyIndexMigrations: MigrationObject[] = [{ name: 'policies_0001_index_unindexed', class: IndexUnindexedPolicies }];
