import { buildSchema, execute, parse, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { executeOperation } from '../../../rest/compiled-operations.js';
import type { Operation } from '../../../rest/documents.js';
import type { RequestContext } from '../../../schema/index.js';
import { NotFoundError } from '../../../src/errors.js';

/*
 * REST rows' queries and mutations run compiled (graphql-jit): they must answer exactly as
 * graphql-js's execute does, errors included (the REST layer masks the first error by
 * its original error, so that must survive compilation).
 */

function schemaLogging(log: string[]): GraphQLSchema {
  const schema = buildSchema(`
    type Item { id: ID! tags: [String!]! }
    type Query { greet(name: String!): String! items(n: Int!): [Item!]! missing: String! }
    type Mutation { first: Int! second: Int! fail: Int! }
  `);
  const fields = (type: string) => (schema.getType(type) as unknown as { getFields(): Record<string, { resolve?: unknown }> }).getFields();
  Object.assign(fields('Query').greet, { resolve: (_: unknown, { name }: { name: string }) => `hello ${name}` });
  Object.assign(fields('Query').items, {
    resolve: async (_: unknown, { n }: { n: number }) => Array.from({ length: n }, (_, i) => ({ id: i, tags: [`t${i}`] })),
  });
  Object.assign(fields('Query').missing, {
    resolve: () => {
      throw new NotFoundError('Nothing here.', { code: 'nothing_here' });
    },
  });
  for (const name of ['first', 'second']) {
    Object.assign(fields('Mutation')[name], {
      resolve: async () => {
        log.push(`${name} start`);
        await new Promise((resolve) => setTimeout(resolve, name === 'first' ? 20 : 0));
        log.push(`${name} end`);
        return log.length;
      },
    });
  }
  Object.assign(fields('Mutation').fail, {
    resolve: async () => {
      throw new NotFoundError('No such thing.', { code: 'nothing_here' });
    },
  });
  return schema;
}

function operation(source: string, kind: Operation['kind'], name: string): Operation {
  return { name, kind, document: parse(source) };
}

const context = {} as RequestContext;

describe('executeOperation', () => {
  it('a query answers as graphql-js does, on every run of its compiled form', async () => {
    const schema = schemaLogging([]);
    const op = operation('query Read($name: String!, $n: Int!) { greet(name: $name) list: items(n: $n) { id tags } }', 'query', 'Read');
    const expected = await execute({ schema, document: op.document, variableValues: { name: 'Ada', n: 3 } });
    expect(await executeOperation(schema, op, context, { name: 'Ada', n: 3 })).toEqual(expected);
    expect(await executeOperation(schema, op, context, { name: 'Bo', n: 0 })).toEqual({ data: { greet: 'hello Bo', list: [] } });
  });

  it.each([
    ['query', 'query Miss { missing }', 'Miss', 'missing', 'Nothing here.'],
    ['mutation', 'mutation Fail { fail }', 'Fail', 'fail', 'No such thing.'],
  ] as const)("a %s resolver's error arrives with its original error and path, the data null", async (kind, source, name, field, message) => {
    const schema = schemaLogging([]);
    const result = await executeOperation(schema, operation(source, kind, name), context, {});
    expect(result.data).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0].message).toBe(message);
    expect(result.errors![0].path).toEqual([field]);
    expect(result.errors![0].originalError).toBeInstanceOf(NotFoundError);
  });

  it('a mutation runs its top-level fields one after the other, as graphql-js does, on every run of its compiled form', async () => {
    const log: string[] = [];
    const schema = schemaLogging(log);
    const both = operation('mutation Both { first second }', 'mutation', 'Both');
    const expected = await execute({ schema, document: both.document });
    expect(expected).toEqual({ data: { first: 2, second: 4 } });
    log.length = 0;
    expect(await executeOperation(schema, both, context, {})).toEqual(expected);
    expect(log).toEqual(['first start', 'first end', 'second start', 'second end']);
    log.length = 0;
    expect(await executeOperation(schema, both, context, {})).toEqual(expected);
  });
});
