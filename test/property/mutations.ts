import fc from 'fast-check';

/*
 * How the generated-input suite spoils a well-formed input: every mutation takes a value built from
 * a route's schema and gives the raw JSON text to send (raw, so that duplicate keys and nesting
 * deeper than JSON.stringify can write are possible too).
 */

export type Path = Array<string | number>;

/** Characters that are easy to mishandle: NUL and lone surrogates (refused at the edge), other controls (ordinary text). */
export const AWKWARD_TEXT = ['\u0000', 'a\u0000b', '\u0001', '\u001b[31m', '\u007f', '\u2028', '\ud800', 'x\udfff', '\ufeff', '\\', '"', "'; drop table x; --", '%00', ''];

const WRONG_TYPES: unknown[] = [123, -1, 1.5, 'text', true, false, null, [], {}, [1, 'a'], { a: 1 }];
const OUT_OF_RANGE = [2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, -1, 1e308, -1e308, 0.5, 1e-7, 4294967296];

/** Nesting far beyond any limit, spliced into the text where the marker string stands. */
const DEEP_MARKER = '\u0091deep\u0091';

export const MUTATIONS = ['none', 'wrong_type', 'out_of_range', 'awkward_text', 'awkward_key', 'huge_string', 'huge_array', 'deep', 'very_deep', 'duplicate_key', 'unknown_key', 'not_an_object'] as const;
export type Mutation = (typeof MUTATIONS)[number];

export interface MutationChoice {
  kind: Mutation;
  /** Which place in the value (an index into its paths, taken modulo their count). */
  at: number;
  /** Which replacement among the kind's list. */
  variant: number;
}

export const mutationChoice: fc.Arbitrary<MutationChoice> = fc.record({
  kind: fc.constantFrom(...MUTATIONS),
  at: fc.nat(),
  variant: fc.nat(),
});

/** Every path in a JSON value, the root (`[]`) first. */
export function pathsOf(value: unknown): Path[] {
  const out: Path[] = [];
  const stack: Array<{ value: unknown; path: Path }> = [{ value, path: [] }];
  while (stack.length) {
    const { value: v, path } = stack.pop()!;
    out.push(path);
    if (Array.isArray(v)) v.forEach((child, i) => stack.push({ value: child, path: [...path, i] }));
    else if (v && typeof v === 'object') for (const [k, child] of Object.entries(v)) stack.push({ value: child, path: [...path, k] });
  }
  return out;
}

function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy: any = structuredClone(root);
  let current = copy;
  for (const part of path.slice(0, -1)) current = current[part];
  current[path[path.length - 1]] = value;
  return copy;
}

const pick = <T>(list: readonly T[], n: number): T => list[n % list.length];

/** The raw JSON text of `value` spoiled by `choice`. */
export function mutateToText(value: unknown, choice: MutationChoice): string {
  const paths = pathsOf(value);
  // Mutate below the root when there is anything below it (the root itself only for not_an_object).
  const inner = paths.length > 1 ? paths.slice(1) : paths;
  const path = pick(inner, choice.at);
  switch (choice.kind) {
    case 'none':
      return JSON.stringify(value);
    case 'wrong_type':
      return JSON.stringify(setAt(value, path, pick(WRONG_TYPES, choice.variant)));
    case 'out_of_range':
      return JSON.stringify(setAt(value, path, pick(OUT_OF_RANGE, choice.variant)));
    case 'awkward_text':
      return JSON.stringify(setAt(value, path, pick(AWKWARD_TEXT, choice.variant)));
    case 'awkward_key': {
      const holder = paths.filter((p) => isPlainObject(valueAt(value, p)));
      const at = pick(holder.length ? holder : [[]], choice.at);
      const target = valueAt(value, at);
      const withKey = { ...(isPlainObject(target) ? target : {}), [`k${pick(AWKWARD_TEXT, choice.variant)}`]: 'v' };
      return JSON.stringify(setAt(value, at, withKey));
    }
    case 'huge_string':
      // Words, not one long token: token counting of unbroken text is another issue's subject.
      return JSON.stringify(setAt(value, path, 'lorem ipsum '.repeat(2000 + (choice.variant % 3) * 1000)));
    case 'huge_array':
      return JSON.stringify(setAt(value, path, Array.from({ length: 2000 }, (_, i) => (choice.variant % 2 ? i : 'x'))));
    case 'deep':
      return JSON.stringify(setAt(value, path, nested(65 + (choice.variant % 100))));
    case 'very_deep':
      return JSON.stringify(setAt(value, path, DEEP_MARKER)).replace(JSON.stringify(DEEP_MARKER), '['.repeat(50_000) + ']'.repeat(50_000));
    case 'duplicate_key': {
      // The same key twice in one object: JSON.parse keeps the last, so the spoiled copy goes last.
      if (!isPlainObject(value) || Object.keys(value).length === 0) return JSON.stringify(value);
      const key = pick(Object.keys(value), choice.at);
      const text = JSON.stringify(value);
      return `${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(pick([...WRONG_TYPES, ...AWKWARD_TEXT], choice.variant))}}`;
    }
    case 'unknown_key':
      return JSON.stringify(isPlainObject(value) ? { ...value, [`unknown_${choice.variant % 5}`]: 1 } : value);
    case 'not_an_object':
      return pick(['[]', '"text"', '12', 'null', 'true', '{', '{"a":1,}', '[1,2', '"\\u0000"'], choice.variant);
  }
}

function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

function valueAt(root: unknown, path: Path): unknown {
  let current: any = root;
  for (const part of path) current = current?.[part];
  return current;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
