/**
 * How the request log's batches reach the database: multi-row inserts with their values bound, in
 * statements of a few fixed row counts (so SQLite keeps each text prepared), in one transaction per
 * batch. MikroORM's insertMany wrote every value into the text (a new text to parse each batch) and
 * built its unit of work around it: ~40 µs of CPU per record on SQLite, four times this.
 */
import { JsonType, type EntityManager } from '@mikro-orm/core';
import { boundSql } from '../../db/sql.js';
import type { Runtime } from '../../runtime.js';
import { RequestLogSchema, type RequestLog } from './request-log.entity.js';

/** Rows per statement, largest first: a batch is cut into statements of these sizes. */
const ROWS_PER_STATEMENT = [64, 16, 4, 1] as const;

interface Column {
  property: keyof RequestLog;
  /** Written as JSON text (both databases read it back as the entity's JSON property). */
  json: boolean;
}

interface Layout {
  columns: Column[];
  /** The insert text for each of ROWS_PER_STATEMENT's sizes. */
  texts: Map<number, string>;
}

/** The entity's columns as MikroORM maps them (so a new property is written without a change here), and the texts. */
function layoutOf(em: EntityManager): Layout {
  const meta = em.getMetadata().get(RequestLogSchema.meta.className);
  const props = meta.props.filter((prop) => prop.persist !== false && prop.fieldNames?.length === 1);
  const columns = props.map((prop) => ({ property: prop.name as keyof RequestLog, json: prop.customType instanceof JsonType }));
  const row = `(${props.map(() => '?').join(', ')})`;
  const head = `insert into "${meta.tableName}" (${props.map((prop) => `"${prop.fieldNames[0]}"`).join(', ')}) values `;
  const texts = new Map(ROWS_PER_STATEMENT.map((size) => [size, head + Array.from({ length: size }, () => row).join(', ')]));
  return { columns, texts };
}

/** Inserts `records` (all or none: one transaction). */
export async function insertRequestLogs(runtime: Runtime, records: readonly RequestLog[]): Promise<void> {
  const em = runtime.fork();
  const { columns, texts } = runtime.singleton('requestLog.insertLayout', () => layoutOf(em));
  await em.transactional(async (tx) => {
    for (let start = 0; start < records.length; ) {
      const size = ROWS_PER_STATEMENT.find((rows) => rows <= records.length - start)!;
      const values: unknown[] = [];
      for (let i = start; i < start + size; i++) {
        const record = records[i];
        for (const column of columns) {
          const value = record[column.property];
          values.push(column.json ? JSON.stringify(value) : (value ?? null));
        }
      }
      await boundSql(tx, texts.get(size)!, values, 'run');
      start += size;
    }
  });
}
