import fc from 'fast-check';
import type { ZodTypeAny } from 'zod';

/*
 * Values shaped by a route's own zod schema, for the generated-input suite: mostly what the schema
 * accepts (so requests get past validation into the services), which the suite then mutates. Only
 * the zod kinds the route schemas use are understood; anything else is any JSON value, which is
 * still a fair input to throw at a route.
 */

const JSON_VALUE = fc.jsonValue({ maxDepth: 3 });

/** Ordinary text with a few of the characters that are easy to mishandle (quotes, %, emoji, other scripts). */
const TEXT = fc.oneof(
  fc.string({ maxLength: 16 }),
  fc.constantFrom('default', 'gpt-4o-mini', 'local', 'Hello {{name}}', "o'brien", '100%', 'Ünïcødé', '😀 emoji', 'user', 'assistant'),
);

export function arbitraryFor(schema: ZodTypeAny, depth = 0): fc.Arbitrary<unknown> {
  const def = schema._def as Record<string, any>;
  if (depth > 6) return JSON_VALUE;
  const inner = (s: ZodTypeAny) => arbitraryFor(s, depth + 1);
  switch (def.typeName) {
    case 'ZodString':
      return stringFor(def.checks ?? []);
    case 'ZodNumber':
      return numberFor(def.checks ?? []);
    case 'ZodBoolean':
      return fc.boolean();
    case 'ZodLiteral':
      return fc.constant(def.value);
    case 'ZodEnum':
      return fc.constantFrom(...(def.values as unknown[]));
    case 'ZodNativeEnum':
      return fc.constantFrom(...Object.values(def.values as object));
    case 'ZodNull':
      return fc.constant(null);
    case 'ZodOptional':
      return fc.option(inner(def.innerType), { nil: undefined, freq: 3 });
    case 'ZodNullable':
      return fc.option(inner(def.innerType), { nil: null, freq: 4 });
    case 'ZodDefault':
    case 'ZodCatch':
    case 'ZodReadonly':
    case 'ZodBranded':
      return inner(def.innerType ?? def.type);
    case 'ZodEffects':
      return inner(def.schema);
    case 'ZodPipeline':
      return inner(def.in);
    case 'ZodLazy':
      return inner(def.getter());
    case 'ZodArray':
      return fc.array(inner(def.type), { maxLength: 3 });
    case 'ZodTuple':
      return fc.tuple(...(def.items as ZodTypeAny[]).map(inner));
    case 'ZodUnion':
      return fc.oneof(...(def.options as ZodTypeAny[]).map(inner));
    case 'ZodDiscriminatedUnion':
      return fc.oneof(...[...(def.options as ZodTypeAny[])].map(inner));
    case 'ZodIntersection':
      return fc.tuple(inner(def.left), inner(def.right)).map(([a, b]) => (isObject(a) && isObject(b) ? { ...a, ...b } : b));
    case 'ZodRecord':
      return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), inner(def.valueType), { maxKeys: 3 });
    case 'ZodObject': {
      const shape = (typeof def.shape === 'function' ? def.shape() : def.shape) as Record<string, ZodTypeAny>;
      const entries = Object.fromEntries(Object.entries(shape).map(([key, value]) => [key, inner(value)]));
      // Optional keys come out as `undefined`, which JSON leaves out.
      return fc.record(entries).map((record) => Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)));
    }
    default:
      return JSON_VALUE;
  }
}

function stringFor(checks: Array<{ kind: string; value?: number; regex?: RegExp }>): fc.Arbitrary<string> {
  const kinds = new Set(checks.map((c) => c.kind));
  if (kinds.has('uuid')) return fc.uuid();
  if (kinds.has('datetime')) return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  const min = checks.find((c) => c.kind === 'min')?.value ?? 0;
  const max = checks.find((c) => c.kind === 'max')?.value;
  return TEXT.map((text) => {
    let out = text.length < min ? text.padEnd(min, 'x') : text;
    if (max !== undefined) out = out.slice(0, max);
    return out;
  });
}

function numberFor(checks: Array<{ kind: string; value?: number; inclusive?: boolean }>): fc.Arbitrary<number> {
  const isInt = checks.some((c) => c.kind === 'int');
  const min = checks.find((c) => c.kind === 'min')?.value ?? (isInt ? 0 : -10);
  const max = checks.find((c) => c.kind === 'max')?.value ?? (isInt ? 1000 : 10);
  const lo = Math.max(min, -1e6);
  const hi = Math.min(max, 1e6);
  return isInt ? fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) }) : fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
