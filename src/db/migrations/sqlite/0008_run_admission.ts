import { Migration } from '@mikro-orm/migrations';

/**
 * The request that created each run, on its row: its kind and x-gateway-request-id. A run
 * admitted with nothing enforced then needs no enforcement record of its creation
 * (`Run.enforcement` lists that admission from the row). Runs written before keep their first
 * record, which holds both: the view reads it when there is one, so nothing is copied here (no
 * rewrite of every run row on upgrade) and an upgraded database shows the same `Run.enforcement`.
 */
export class Migration0008RunAdmission extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table `runs` add column `admission_kind` text null");
    this.addSql("alter table `runs` add column `admission_request_id` text null");
  }
}
