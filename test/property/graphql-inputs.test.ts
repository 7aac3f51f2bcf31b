import fc from 'fast-check';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../schema/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { AWKWARD_TEXT } from './mutations.js';
import { tableNames } from '../helpers/tables.js';
import { rowCounts } from './row-counts.js';

/*
 * Generated variables for every query and mutation field of the GraphQL schema, from the
 * arguments' own types: mostly well-typed values, with awkward text (NUL, lone surrogates, other
 * controls), out-of-range integers, deep JSON and wrong types mixed in. Every error must carry
 * `status` (below 500), `type`, `param` and `code` in its extensions, and a mutation that answers
 * with an error must leave every table's row count as it was. Seeded and bounded like
 * rest-inputs.test.ts (PROPERTY_SEED, PROPERTY_RUNS).
 */

const SEED = Number(process.env.PROPERTY_SEED ?? 20261123);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 8);

let t: TestApp;
let tables: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  tables = await tableNames(t);
});
afterAll(() => t.close());

const counts = () => rowCounts(t, tables);

const text = fc.oneof({ arbitrary: fc.constantFrom('default', 'local', 'gpt-4o-mini', 'x', ''), weight: 3 }, { arbitrary: fc.string({ maxLength: 12 }), weight: 2 }, { arbitrary: fc.constantFrom(...AWKWARD_TEXT), weight: 2 });
const integer = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 100 }), weight: 3 }, { arbitrary: fc.constantFrom(-1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1.5), weight: 1 });
const deepJson = fc.integer({ min: 60, max: 200 }).map((levels) => {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = [value];
  return value;
});
const json = fc.oneof({ arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 4 }, { arbitrary: deepJson, weight: 1 }, { arbitrary: fc.constantFrom(...AWKWARD_TEXT), weight: 1 });
const wrongType = fc.constantFrom<unknown>(1, 'x', true, [], {}, null);

/** A value for a GraphQL input type; now and then one of the wrong type. */
function valueFor(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return valueFor(type.ofType, depth);
  if (isListType(type)) return fc.array(valueFor(type.ofType, depth + 1), { maxLength: 2 });
  const named = getNamedType(type);
  let good: fc.Arbitrary<unknown>;
  if (isEnumType(named)) good = fc.constantFrom(...named.getValues().map((v) => v.name));
  else if (isInputObjectType(named)) {
    if (depth > 4) return fc.constant({});
    const fields = Object.values(named.getFields());
    good = fc
      .record(Object.fromEntries(fields.map((f) => [f.name, isNonNullType(f.type) ? valueFor(f.type, depth + 1) : fc.option(valueFor(f.type, depth + 1), { nil: undefined, freq: 2 })])))
      .map((record) => Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)));
  } else if (isScalarType(named)) {
    good = { String: text, ID: text, Int: integer, Float: fc.double({ noNaN: true, noDefaultInfinity: true }), Boolean: fc.boolean(), JSON: json, DateTime: fc.constantFrom('2026-11-22T10:00:00.000Z', 'yesterday') }[named.name] ?? json;
  } else good = json;
  return fc.oneof({ arbitrary: good, weight: 6 }, { arbitrary: wrongType, weight: 1 });
}

function documentFor(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const declared = field.args.map((arg: GraphQLArgument) => `$${arg.name}: ${arg.type.toString()}`).join(', ');
  const passed = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const selection = isLeafType(getNamedType(field.type)) ? '' : ' { __typename }';
  return `${kind}${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''}${selection} }`;
}

function expectShapedErrors(errors: any[], label: string): void {
  for (const error of errors) {
    const ext = error.extensions ?? {};
    expect(typeof ext.status, label).toBe('number');
    expect(ext.status, label).toBeLessThan(500);
    expect(typeof ext.type, label).toBe('string');
    expect(ext.param === null || typeof ext.param === 'string', label).toBe(true);
    expect(ext.code === null || typeof ext.code === 'string', label).toBe(true);
  }
}

const fieldsOf = (kind: 'query' | 'mutation') => Object.values((kind === 'query' ? schema.getQueryType() : schema.getMutationType())!.getFields()).filter((f) => f.args.length > 0);

describe('generated variables on every GraphQL field with arguments', () => {
  for (const kind of ['query', 'mutation'] as const) {
    for (const field of fieldsOf(kind)) {
      it(`${kind} ${field.name}`, async () => {
        const document = documentFor(kind, field);
        const variables = fc.record(Object.fromEntries(field.args.map((arg) => [arg.name, valueFor(arg.type)])));
        await fc.assert(
          fc.asyncProperty(variables, async (vars) => {
            const before = kind === 'mutation' ? await counts() : null;
            const res = await t.graphql(document, vars);
            const label = `${document} ${JSON.stringify(vars).slice(0, 300)} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
            expect(res.status, label).toBeLessThan(500);
            if (!res.errors) return;
            expectShapedErrors(res.errors, label);
            if (before) expect(await counts(), `${label}: an error wrote rows`).toEqual(before);
          }),
          { seed: SEED, numRuns: RUNS, endOnFailure: true },
        );
      });
    }
  }
});
