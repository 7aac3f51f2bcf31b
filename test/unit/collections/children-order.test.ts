import { createRequire } from 'node:module';
import { expect, it } from 'vitest';
import { sortedAsSqlite } from '../../../src/modules/collections/collection-loaders.js';

/*
 * On SQLite a level's children are put in `byName` order in JavaScript (collection-loaders.ts): the
 * order must be SQLite's own `order by lower(name), name, id`, asked of SQLite here.
 */

/** Names where JavaScript's ways differ from SQLite's: case, non-ASCII letters lower() leaves alone, UTF-16 vs UTF-8 order, ties. */
const NAMES = ['b', 'B', 'a', 'A', 'a', 'É', 'é', 'e', 'Z', 'z', '_', 'ab', 'a b', 'Ab', '\uFF01', '😀', 'x😀', 'x\uFFFD', 'x\uE000', 'Ω', 'ω', 'Éz', 'éa', 'Ωz', 'ωa', '', ' a'];

/** The part of better-sqlite3 used here (the project declares no types for it). */
interface Db {
  exec(sql: string): void;
  prepare(sql: string): { run(values: unknown[]): void; pluck(): { all(): unknown[] } };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => Db;

function sqliteOrder(rows: Array<[string, string]>): string[] {
  const db = new Database(':memory:');
  db.exec('create table c (id text, name text)');
  const insert = db.prepare('insert into c (id, name) values (?, ?)');
  for (const row of rows) insert.run(row);
  const ids = db.prepare('select id from c order by lower(name) asc, name asc, id asc').pluck().all() as string[];
  db.close();
  return ids;
}

function check(names: string[]): void {
  // Ids out of name order, so the tie on equal names is decided by the id.
  const rows = names.map((name, i): [string, string] => [`id-${String((i * 7) % names.length).padStart(3, '0')}-${i}`, name]);
  const children = rows.map(([id, name]) => [id, name, 'slug', 0]);
  expect(sortedAsSqlite(children).map((child) => child[0])).toEqual(sqliteOrder(rows));
}

it('orders names as SQLite does, surrogates included', () => {
  check(NAMES);
  check([...NAMES].reverse());
});

it('orders names without surrogates as SQLite does', () => {
  check(NAMES.filter((name) => !/[\uD800-\uDFFF]/.test(name)));
});

it('orders 1,000 generated names as SQLite does', () => {
  const letters = ['a', 'A', 'b', 'B', 'é', 'É', ' ', '-', '\uFFEE', '😀', '1'];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const names = Array.from({ length: 1000 }, () => Array.from({ length: 1 + (next() % 4) }, () => letters[next() % letters.length]).join(''));
  check(names);
});
