import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { filesUnder, root } from '../../helpers/source-files.js';

/*
 * The usage engine owns the usage tables: every statement on buckets, reservations and alerts is
 * in src/modules/usage/, so a change to how usage is counted is made there and nowhere else
 * (src/db/ is left out: creating the tables is the migrations' job, not usage SQL).
 */
const USAGE_TABLES = /\busage_(buckets|reservations|alerts)\b/;

it('no SQL on the usage tables outside src/modules/usage', () => {
  const offenders = [...filesUnder(join(root, 'src')), ...filesUnder(join(root, 'schema')), ...filesUnder(join(root, 'rest'))]
    .filter((file) => file.endsWith('.ts') && ![join(root, 'src', 'modules', 'usage'), join(root, 'src', 'db')].some((dir) => file.startsWith(dir)))
    .filter((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        // Comments may name the tables; code may not.
        .some((line) => USAGE_TABLES.test(line) && !/^\s*(\/\/|\*|\/\*)/.test(line)),
    )
    .map((file) => relative(root, file));
  expect(offenders).toEqual([]);
});
