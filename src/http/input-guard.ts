/**
 * The one rule every client input passes before it can reach the database, at both front doors
 * (REST path parameters, query values and JSON bodies; GraphQL arguments and variables):
 *
 * - no text may hold U+0000 or a lone UTF-16 surrogate: SQLite's SQL text and PostgreSQL's text
 *   and jsonb cannot hold the first, no UTF-8 column can hold the second (it would be stored as
 *   U+FFFD, a silent change). This applies to object keys as well as values;
 * - JSON may nest at most `maxDepth` arrays and objects: serialising deeper values (the JSON
 *   column type does) recurses once per level and overflows the stack.
 *
 * - numbers must be finite: JSON.parse reads `1e400` as Infinity, which no column or GraphQL
 *   scalar can hold.
 *
 * The walk is iterative, so the check itself cannot overflow whatever the input's depth.
 * Header values need no check: HTTP and the Fetch API refuse NUL in them, and they are byte
 * strings, so they hold no surrogates.
 */

import { wirePath } from '../lib/contract.js';

export type PathPart = string | number;

export interface InputProblem {
  /** Where the problem is, in wire terms (`tool_resources.code_interpreter.file_ids[0]`); null for the whole input. */
  param: string | null;
  message: string;
  code: 'invalid_character' | 'nesting_too_deep' | 'invalid_number';
}

const UNSAFE_CHARACTER = /[\u0000\p{Cs}]/u;

/** The unsafe character in `text`, named for a message (`U+0000`), or null when there is none. */
function unsafeCharacterIn(text: string): string | null {
  const match = UNSAFE_CHARACTER.exec(text);
  return match ? `U+${match[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}` : null;
}

/** `['tool_outputs', 0, 'output']` → `tool_outputs[0].output`; null for the whole input. */
function paramPath(path: ReadonlyArray<PathPart>): string | null {
  return wirePath(path) || null;
}

/** How a message names where the problem is: the parameter, or the body when it is the whole input. */
function subject(param: string | null): string {
  return param ? `Invalid value for '${param}'` : 'Invalid request body';
}

function characterProblem(path: ReadonlyArray<PathPart>, character: string, inKey = false): InputProblem {
  const param = paramPath(path);
  const problem = `the character ${character}, which text may not hold`;
  if (!inKey) return { param, code: 'invalid_character', message: `${subject(param)}: it contains ${problem}.` };
  const where = param ? ` in '${param}'` : '';
  return { param, code: 'invalid_character', message: `Invalid parameter name${where}: it contains ${problem}.` };
}

function depthProblem(path: ReadonlyArray<PathPart>, maxDepth: number): InputProblem {
  // The top-level parameter names the problem well enough (the full path would be as deep as the
  // value); a body that is itself an array has none.
  const param = typeof path[0] === 'string' ? path[0] : null;
  return { param, code: 'nesting_too_deep', message: `${subject(param)}: JSON may nest at most ${maxDepth} levels of arrays and objects.` };
}

/** A value waiting to be checked; its path is rebuilt from the parent links only for a problem. */
interface Pending {
  value: unknown;
  parent: Pending | null;
  key: PathPart | undefined;
  depth: number;
}

function pathOf(item: Pending, base: ReadonlyArray<PathPart>): PathPart[] {
  const keys: PathPart[] = [];
  for (let at: Pending | null = item; at && at.parent; at = at.parent) keys.push(at.key!);
  return [...base, ...keys.reverse()];
}

/**
 * The first problem in a parsed JSON value (or a record of strings, such as path parameters),
 * or null. `path` is where `value` sits in the request; the depth counts from `value` itself.
 * This runs on every request body, so the walk allocates one small record per value and builds
 * a path only for the problem it reports.
 */
export function findInputProblem(value: unknown, maxDepth: number, path: PathPart[] = []): InputProblem | null {
  const stack: Pending[] = [{ value, parent: null, key: undefined, depth: 0 }];
  while (stack.length) {
    const item = stack.pop()!;
    if (typeof item.value === 'string') {
      const character = unsafeCharacterIn(item.value);
      if (character) return characterProblem(pathOf(item, path), character);
      continue;
    }
    if (typeof item.value === 'number' && !Number.isFinite(item.value)) {
      const param = paramPath(pathOf(item, path));
      return { param, code: 'invalid_number', message: `${subject(param)}: the number is too large to be represented.` };
    }
    if (typeof item.value !== 'object' || item.value === null) continue;
    const depth = item.depth + 1;
    if (depth > maxDepth) return depthProblem(pathOf(item, path), maxDepth);
    // Pushed in reverse so the first offending entry in document order is the one reported.
    if (Array.isArray(item.value)) {
      for (let i = item.value.length - 1; i >= 0; i--) stack.push({ value: item.value[i], parent: item, key: i, depth });
      continue;
    }
    const keys = Object.keys(item.value);
    for (const key of keys) {
      const character = unsafeCharacterIn(key);
      if (character) return characterProblem(pathOf(item, path), character, true);
    }
    const object = item.value as Record<string, unknown>;
    for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: object[keys[i]], parent: item, key: keys[i], depth });
  }
  return null;
}
