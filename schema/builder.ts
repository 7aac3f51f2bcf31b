import SchemaBuilder from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { GraphQLScalarType, Kind } from 'graphql';
import type { RequestContext } from '../src/context.js';
import { organisationKeyRequired } from '../src/auth/tenancy.js';

/**
 * The one SchemaBuilder. It defines plugins, scalars and the root types, and no domain types: each
 * domain file (`schema/<domain>.ts`) adds its own objects and fields.
 */
export const builder = new SchemaBuilder<{
  Context: RequestContext;
  DefaultFieldNullability: false;
  AuthScopes: { organisationKey: boolean };
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [ScopeAuthPlugin, DataloaderPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (context) => ({ organisationKey: context.principal.type === 'organisation' }),
    unauthorizedError: () => organisationKeyRequired(),
  },
});

builder.addScalarType(
  'DateTime',
  new GraphQLScalarType<Date, string>({
    name: 'DateTime',
    description: 'An instant, as ISO 8601 in UTC with milliseconds (2026-11-22T10:00:00.000Z).',
    // A Date (what resolvers return) is written as it is: no copy per value (a read of 1,000
    // collections writes 3,000 of them).
    serialize: (value) => (value instanceof Date ? value : new Date(value as string)).toISOString(),
    parseValue: (value) => parseDate(value),
    parseLiteral: (ast) => (ast.kind === Kind.STRING ? parseDate(ast.value) : invalidDate()),
  }),
);

function parseDate(value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : new Date(NaN);
  return Number.isNaN(date.getTime()) ? invalidDate() : date;
}

function invalidDate(): never {
  throw new TypeError('DateTime must be an ISO 8601 string.');
}

builder.addScalarType(
  'JSON',
  new GraphQLScalarType({
    name: 'JSON',
    description: 'Any JSON value.',
    serialize: (value) => value,
    parseValue: (value) => value,
    parseLiteral: (ast) => literalToJson(ast),
  }),
);

function literalToJson(ast: import('graphql').ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map(literalToJson);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((field) => [field.name.value, literalToJson(field.value)]));
    default:
      throw new TypeError('Variables are not allowed inside JSON literals.');
  }
}

builder.queryType({ description: 'Reads.' });
builder.mutationType({ description: 'Writes.' });
builder.subscriptionType({ description: 'Live events, over graphql-sse.' });
