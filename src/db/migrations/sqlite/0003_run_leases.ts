import { Migration } from '@mikro-orm/migrations';

/** Run leases: the instance executing a run, and until when its claim holds (several instances on one database). */
export class Migration0003RunLeases extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table `runs` add column `lease_owner` text null");
    this.addSql("alter table `runs` add column `lease_expires_at` bigint null");
  }
}
