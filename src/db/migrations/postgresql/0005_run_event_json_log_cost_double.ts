import { Migration } from '@mikro-orm/migrations';

/**
 * A request's cost as a double (PostgreSQL's `real` kept 6 digits; SQLite's REAL already has 8 bytes,
 * the table is rebuilt only because its declared type changes), and, on PostgreSQL, run events'
 * data as `json`, which keeps an event's text as written, where `jsonb` reordered its keys, so a
 * replayed event differed from the live one.
 */
export class Migration0005RunEventJsonLogCostDouble extends Migration {
  override async up(): Promise<void> {
    this.addSql("alter table \"request_logs\" alter column \"cost\" type double precision using (\"cost\"::double precision)");
    this.addSql("alter table \"run_events\" alter column \"data\" type json using (\"data\"::json)");
  }
}
