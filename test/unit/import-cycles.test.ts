/**
 * No source file reaches itself through its imports, type-only imports included: a circle means
 * two layers each need the other (the runtime importing every module while every service imports
 * the runtime was one), so neither can be read, tested or replaced alone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { root } from '../helpers/source-files.js';

/** Relative imports of a file (static, type-only, re-exports and `import()`), resolved to .ts files. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((i) => i.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')))
    .filter((path) => existsSync(path));
}

/** The import graph reachable from `entries`. */
function importGraph(entries: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const pending = [...entries];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (graph.has(file)) continue;
    const imports = importsOf(file);
    graph.set(file, imports);
    pending.push(...imports);
  }
  return graph;
}

/** One circle per strongly connected component of more than one file (or a file importing itself). */
function circles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const dep of graph.get(file)!) {
      if (!index.has(dep)) {
        visit(dep);
        low.set(file, Math.min(low.get(file)!, low.get(dep)!));
      } else if (onStack.has(dep)) {
        low.set(file, Math.min(low.get(file)!, index.get(dep)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) found.push(component.map((f) => relative(root, f)).sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('import circles', () => {
  const entries = ['src/app.ts', 'src/server.ts', 'src/cli.ts', 'schema/print.ts'].map((f) => join(root, f));

  it('the app, the server, the CLI and the schema printer import no file that imports itself back', () => {
    const graph = importGraph(entries);
    expect(graph.has(join(root, 'src/runtime.ts'))).toBe(true);
    expect(circles(graph)).toEqual([]);
  });

  it('the check finds a circle, type-only imports included', () => {
    const graph = new Map([
      ['/a.ts', ['/b.ts']],
      ['/b.ts', ['/c.ts']],
      ['/c.ts', ['/a.ts']],
      ['/d.ts', ['/a.ts']],
    ]);
    expect(circles(graph).map((c) => c.length)).toEqual([3]);
    const source = `import type { Runtime } from './runtime.js';\nexport * from './x.js';\nconst m = await import('./y.js');`;
    expect(ts.preProcessFile(source, true, true).importedFiles.map((i) => i.fileName)).toEqual(['./runtime.js', './x.js', './y.js']);
  });
});
