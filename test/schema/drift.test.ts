import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { loadOperations } from '../../rest/documents.js';
import { routes } from '../../rest/routes.js';
import { schema } from '../../schema/index.js';
import { filesUnder, root } from '../helpers/source-files.js';

describe('drift', () => {
  it('the printed schema equals schema/schema.graphql (run npm run schema:print)', () => {
    expect(readFileSync(join(root, 'schema/schema.graphql'), 'utf8')).toBe(`${printSchema(schema)}\n`);
  });

  it('every REST operation document validates against the schema, and every row names one', () => {
    const operations = loadOperations(schema);
    for (const row of routes) {
      // A row without an operation is answered from the table itself (the OpenAPI document).
      expect(row.operation === undefined ? row.document !== undefined : operations.has(row.operation), `${row.method} ${row.path} → ${row.operation}`).toBe(true);
      if (row.stream) expect(operations.has(row.stream.operation)).toBe(true);
    }
  });

  it('the route table equals the route list in README.md, both ways', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const section = readme.split('<!-- routes:start -->')[1]?.split('<!-- routes:end -->')[0] ?? '';
    const documented = section
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => /^(GET|POST|PUT|DELETE) \/v1\//.test(line))
      .sort();
    const table = routes.map((row) => `${row.method} ${row.path.replace(/:(\w+)/g, '{$1}')}`).sort();
    expect(new Set(table).size, 'no duplicate rows').toBe(table.length);
    expect(documented).toEqual(table);
  });

  it('rest/ imports from src/ only the HTTP helpers of src/http/ and the domain-free helpers of src/lib/, never the domain', () => {
    const offenders = filesUnder(join(root, 'rest'))
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\()['"]((?:\.\.\/)+src\/[^'"]+)['"]/g)].map((m) => `${file}: ${m[1]}`))
      .filter((use) => !/: (\.\.\/)+src\/(http|lib)\//.test(use));
    expect(offenders).toEqual([]);
  });
});
