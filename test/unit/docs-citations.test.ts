/**
 * The repository's documents are its own: nothing in the sources, tests, benches or docs sends a reader to
 * a document outside the repository, and every `docs/<page>.md#<anchor>` that is cited exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesUnder, root } from '../helpers/source-files.js';

const scanned = () => [
  ...['src', 'schema', 'rest', 'test', 'docs', 'bench', 'bin'].flatMap((dir) => filesUnder(join(root, dir))),
  join(root, 'README.md'),
  join(root, 'CONTRIBUTING.md'),
];

// Written with escapes so that this file does not match itself.
const OUTSIDE = /CONTRACT\.md|interface\.md|\.\.\/shared|CONTRACT\s§|interface\s§/;

/** GitHub's anchor of a Markdown heading. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsIn(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1])));
}

describe('citations', () => {
  it('no file cites a document outside the repository', () => {
    const offenders = scanned().flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (OUTSIDE.test(line) ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offenders).toEqual([]);
  });

  it('every cited docs page and anchor exists', () => {
    const cited = scanned().flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\bdocs\/([a-z-]+\.md)(?:#([a-z0-9-]+))?/g)].map((m) => ({ at: relative(root, file), page: m[1], anchor: m[2] })),
    );
    expect(cited.length).toBeGreaterThan(10);
    const missing = cited.filter(({ page, anchor }) => {
      const path = join(root, 'docs', page);
      return !existsSync(path) || (anchor !== undefined && !anchorsIn(readFileSync(path, 'utf8')).has(anchor));
    });
    expect(missing).toEqual([]);
  });

  it('the checks see what they look for', () => {
    expect(OUTSIDE.test(['see ', 'CONTRACT', '.md'].join(''))).toBe(true);
    expect(OUTSIDE.test(['(', 'interface', ' §2.1)'].join(''))).toBe(true);
    expect(OUTSIDE.test(['../', 'shared/ARCHITECTURE.md'].join(''))).toBe(true);
    expect(OUTSIDE.test('docs/contract.md#errors')).toBe(false);
    expect(anchorOf('Usage-limit policies')).toBe('usage-limit-policies');
    expect(anchorOf('Limits of run inputs')).toBe('limits-of-run-inputs');
    expect(anchorOf('A provider (`ai_provider_id`)')).toBe('a-provider-ai_provider_id');
  });
});
