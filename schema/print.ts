import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printSchema } from 'graphql';
import { schema } from './index.js';

/** `npm run schema:print` writes schema/schema.graphql; `--check` fails when it has drifted. */
const target = join(dirname(fileURLToPath(import.meta.url)), 'schema.graphql');
const printed = `${printSchema(schema)}\n`;
if (process.argv.includes('--check')) {
  const committed = readFileSync(target, 'utf8');
  if (committed !== printed) {
    console.error('schema/schema.graphql is out of date: run `npm run schema:print` and commit it.');
    process.exit(1);
  }
  console.log('schema/schema.graphql is up to date.');
} else {
  writeFileSync(target, printed);
  console.log(`wrote ${target}`);
}
