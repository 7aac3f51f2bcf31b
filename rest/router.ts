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

/** A table's rows compiled, and what a request to one of its fixed paths (no parameter) matched. */
interface CompiledTable {
  rows: CompiledRow[];
  /** The rows' paths without parameters, and the methods the rows name. */
  fixedPaths: Set<string>;
  methods: Set<string>;
  /**
   * By method, then fixed path: the scan's answer, made once. Model traffic goes to fixed paths
   * (`/v1/chat/completions`), where the scan tried every row before it (~1.6 µs and a few KB of
   * regex results per request). Bounded by the table: only its methods and fixed paths are kept.
   */
  answers: Map<string, Map<string, RouteMatch>>;
}

const compiled = new WeakMap<RouteRow[], CompiledTable>();

function compile(rows: RouteRow[]): CompiledTable {
  let out = compiled.get(rows);
  if (!out) {
    const compiledRows = rows.map((row) => {
      const names: string[] = [];
      const source = row.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, (_m, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      const parameter = row.path.indexOf(':');
      return { row, names, prefix: parameter === -1 ? row.path : row.path.slice(0, parameter), pattern: new RegExp(`^${source}/?$`) };
    });
    const fixedPaths = new Set(rows.filter((row) => !row.path.includes(':')).map((row) => row.path));
    out = { rows: compiledRows, fixedPaths, methods: new Set(rows.map((row) => row.method)), answers: new Map() };
    compiled.set(rows, out);
  }
  return out;
}

/** Finds the row for a method and path; a known path with another method is a 405 with `Allow`. */
export function matchRoute(rows: RouteRow[], method: string, pathname: string): RouteMatch {
  const table = compile(rows);
  if (!table.fixedPaths.has(pathname) || !table.methods.has(method)) return scan(table.rows, method, pathname);
  let byPath = table.answers.get(method);
  if (!byPath) table.answers.set(method, (byPath = new Map()));
  let answer = byPath.get(pathname);
  if (!answer) byPath.set(pathname, (answer = scan(table.rows, method, pathname)));
  // A copy: the caller may keep or change what it gets.
  if (answer.kind === 'found') return { kind: 'found', row: answer.row, params: { ...answer.params } };
  return answer.kind === 'method_not_allowed' ? { kind: 'method_not_allowed', allow: [...answer.allow] } : answer;
}

/** The first row (in table order) whose pattern matches the path and whose method is `method`. */
function scan(rows: CompiledRow[], method: string, pathname: string): RouteMatch {
  let allow: Set<string> | undefined;
  for (const { row, prefix, pattern, names } of rows) {
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
