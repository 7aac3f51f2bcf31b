import type { RouteRow } from './route.js';

export type RouteMatch =
  | { kind: 'found'; row: RouteRow; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

interface CompiledRow {
  row: RouteRow;
  /** The path up to its first parameter: a path without it cannot match (tested before the pattern). */
  prefix: string;
  pattern: RegExp;
  names: string[];
}

const compiled = new WeakMap<RouteRow[], CompiledRow[]>();

function compile(rows: RouteRow[]): CompiledRow[] {
  let out = compiled.get(rows);
  if (!out) {
    out = rows.map((row) => {
      const names: string[] = [];
      const source = row.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, (_m, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      const parameter = row.path.indexOf(':');
      return { row, names, prefix: parameter === -1 ? row.path : row.path.slice(0, parameter), pattern: new RegExp(`^${source}/?$`) };
    });
    compiled.set(rows, out);
  }
  return out;
}

/** Finds the row for a method and path; a known path with another method is a 405 with `Allow`. */
export function matchRoute(rows: RouteRow[], method: string, pathname: string): RouteMatch {
  let allow: Set<string> | undefined;
  for (const { row, prefix, pattern, names } of compile(rows)) {
    if (!pathname.startsWith(prefix)) continue;
    const m = pattern.exec(pathname);
    if (!m) continue;
    if (row.method !== method) {
      (allow ??= new Set()).add(row.method);
      continue;
    }
    const params: Record<string, string> = {};
    names.forEach((name, i) => {
      params[name] = safeDecode(m[i + 1]);
    });
    return { kind: 'found', row, params };
  }
  return allow ? { kind: 'method_not_allowed', allow: [...allow].sort() } : { kind: 'not_found' };
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
