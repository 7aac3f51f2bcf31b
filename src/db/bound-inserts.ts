/**
 * Rows inserted as MikroORM's insertMany stores them, but by multi-row statements with their values
 * bound, of a few fixed row counts (so SQLite keeps each text prepared), in one transaction per
 * call. insertMany writes every value into the text (a new text to parse each batch) and builds
 * its unit of work around it: ~40 µs of CPU per request-log record on SQLite, four times this.
 * For entities whose persisted properties are all plain columns (one field each, no relation, no
 * default or creation hook a row could leave to the database or the ORM); any other entity's rows
 * go through insertMany.
 */
import { JsonType, type EntityManager, type EntityName } from '@mikro-orm/core';
import type { Runtime } from '../runtime.js';
import { boundSql, InsertTexts } from './sql.js';

/** Rows per statement, largest first: the rows are cut into statements of these sizes. */
const ROWS_PER_STATEMENT = [64, 16, 4, 1] as const;

interface Column {
  property: string;
  /** Written as JSON text (both databases read it back as the entity's JSON property). */
  json: boolean;
}

interface Layout {
  columns: Column[];
  /** The insert text of each of ROWS_PER_STATEMENT's sizes. */
  texts: InsertTexts;
}

/** The entity's columns as MikroORM maps them (a new property is written with no change here) and its texts; null when it has other than plain columns. */
function layoutOf<T extends object>(em: EntityManager, entity: EntityName<T>): Layout | null {
  const meta = em.getMetadata(entity);
  const props = meta.props.filter((prop) => prop.persist !== false);
  const plain = props.every(
    (prop) => prop.kind === 'scalar' && prop.fieldNames?.length === 1 && prop.default === undefined && prop.defaultRaw === undefined && !prop.onCreate && !prop.version,
  );
  if (!plain) return null;
  const columns = props.map((prop) => ({ property: prop.name, json: prop.customType instanceof JsonType }));
  const texts = new InsertTexts(`"${meta.tableName}"`, props.map((prop) => `"${prop.fieldNames[0]}"`), ROWS_PER_STATEMENT[0]);
  return { columns, texts };
}

/** Inserts `rows` of `entity` (all or none). */
export async function insertRows<T extends object>(runtime: Runtime, entity: EntityName<T>, rows: readonly T[]): Promise<void> {
  const em = runtime.fork();
  const layouts = runtime.singleton('db.boundInsertLayouts', () => new Map<unknown, Layout | null>());
  let layout = layouts.get(entity);
  if (layout === undefined) layouts.set(entity, (layout = layoutOf(em, entity)));
  if (!layout) {
    await em.insertMany(entity, rows as T[]);
    return;
  }
  const { columns, texts } = layout;
  await em.transactional(async (tx) => {
    for (let start = 0; start < rows.length; ) {
      const size = ROWS_PER_STATEMENT.find((count) => count <= rows.length - start)!;
      const values: unknown[] = [];
      for (let i = start; i < start + size; i++) {
        const row = rows[i] as Record<string, unknown>;
        for (const column of columns) {
          const value = row[column.property];
          values.push(column.json ? JSON.stringify(value) : (value ?? null));
        }
      }
      await boundSql(tx, texts.of(size), values, 'run');
      start += size;
    }
  });
}
