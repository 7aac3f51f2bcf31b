// Written by `npm run migrate -- create <name>` (src/db/migrations/files.ts): the sqlite schema migrations, in order.
import type { MigrationObject } from '@mikro-orm/core';
import { Migration0001Initial } from './0001_initial.js';
import { Migration0002PromptSettings } from './0002_prompt_settings.js';
import { Migration0003RunLeases } from './0003_run_leases.js';
import { Migration0004PromptDefaultVersion } from './0004_prompt_default_version.js';
import { Migration0005RunEventJsonLogCostDouble } from './0005_run_event_json_log_cost_double.js';
import { Migration0006PolicyCounts } from './0006_policy_counts.js';
import { Migration0007CollectionDetails } from './0007_collection_details.js';
import { Migration0008RunAdmission } from './0008_run_admission.js';
import { Migration0009RunPathPages } from './0009_run_path_pages.js';
import { Migration0010ThreadOrderIndexes } from './0010_thread_order_indexes.js';
import { Migration0011RunStepsByRun } from './0011_run_steps_by_run.js';
import { Migration0012CollectionChildrenVersion } from './0012_collection_children_version.js';

export const sqliteMigrations: MigrationObject[] = [
  { name: '0001_initial', class: Migration0001Initial },
  { name: '0002_prompt_settings', class: Migration0002PromptSettings },
  { name: '0003_run_leases', class: Migration0003RunLeases },
  { name: '0004_prompt_default_version', class: Migration0004PromptDefaultVersion },
  { name: '0005_run_event_json_log_cost_double', class: Migration0005RunEventJsonLogCostDouble },
  { name: '0006_policy_counts', class: Migration0006PolicyCounts },
  { name: '0007_collection_details', class: Migration0007CollectionDetails },
  { name: '0008_run_admission', class: Migration0008RunAdmission },
  { name: '0009_run_path_pages', class: Migration0009RunPathPages },
  { name: '0010_thread_order_indexes', class: Migration0010ThreadOrderIndexes },
  { name: '0011_run_steps_by_run', class: Migration0011RunStepsByRun },
  { name: '0012_collection_children_version', class: Migration0012CollectionChildrenVersion },
];
