import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openOrm } from '../../../src/db/orm.js';
import { domainModules } from '../../../src/modules/index.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-orm-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('reopening a database whose schema is current changes nothing (enums of three or more values included)', async () => {
  const file = join(dir, 'gatehouse.sqlite');
  const entities = domainModules.flatMap((m) => m.entities);
  await (await openOrm({ database: { dialect: 'sqlite', file }, entities })).close(true);
  const statements: string[] = [];
  const orm = await openOrm({ database: { dialect: 'sqlite', file }, entities, onQuery: (sql) => statements.push(sql) });
  try {
    expect(statements.filter((sql) => /^\s*(create|alter|drop|insert)\b/i.test(sql))).toEqual([]);
    expect(await orm.schema.getUpdateSchemaSQL({ safe: true })).toBe('');
    const [{ journal_mode }] = await orm.em.fork().getConnection().execute<{ journal_mode: string }[]>('pragma journal_mode');
    expect(journal_mode).toBe('wal');
  } finally {
    await orm.close(true);
  }
});
