/**
 * The error registry (src/errors.ts ERROR_CODES) is the one list of codes: README's table shows
 * exactly it, every code the source answers with is in it, and the shared messages are worded once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, invalidType, missingParameter, unsupportedValue } from '../../src/errors.js';
import { filesUnder, root } from '../helpers/source-files.js';

/** zod's own issue codes, which contract.ts names while it reads zod issues. */
const ZOD_ISSUE_CODES = new Set(['invalid_union', 'invalid_union_discriminator']);

function codesInSource(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [/\bcode: '([a-z_]+)'/g, /(?:addWireIssue|refuse)\(\s*ctx,\s*'([a-z_]+)'/g, /^\s+\d{3}: '([a-z_]+)',$/gm];
  for (const dir of ['src', 'schema', 'rest']) {
    for (const file of filesUnder(join(root, dir)).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(file, 'utf8');
      for (const pattern of patterns) for (const m of text.matchAll(pattern)) if (!ZOD_ISSUE_CODES.has(m[1])) found.set(m[1], file.slice(root.length + 1));
    }
  }
  return found;
}

describe('error registry', () => {
  it('README lists exactly the registered codes, with their statuses', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const block = readme.slice(readme.indexOf('<!-- error-codes:start -->'), readme.indexOf('<!-- error-codes:end -->'));
    const rows = [...block.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(rows).toEqual(Object.entries(ERROR_CODES).map(([code, [status]]) => [code, status]));
  });

  it('every code the source answers with is registered', () => {
    const used = codesInSource();
    expect(used.size).toBeGreaterThan(40);
    const unregistered = [...used].filter(([code]) => !(code in ERROR_CODES)).map(([code, file]) => `${code} (${file})`);
    expect(unregistered).toEqual([]);
  });

  it('the shared messages', () => {
    expect(missingParameter('tool_outputs').message).toBe("Missing required parameter: 'tool_outputs'.");
    expect(missingParameter('page_size', 'query').message).toBe("Missing required query parameter: 'page_size'.");
    expect(invalidType('a.b', 'a string', 1.5)).toMatchObject({ message: "Invalid type for 'a.b': expected a string, but got a decimal instead.", param: 'a.b', code: 'invalid_type', status: 400 });
    expect(unsupportedValue('order', 'up', ['asc', 'desc']).message).toBe("Invalid value: 'up'. Supported values are: 'asc' and 'desc'.");
  });
});
