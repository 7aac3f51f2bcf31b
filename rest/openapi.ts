import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getNamedType, isObjectType, Kind, type GraphQLField } from 'graphql';
import type { ZodType } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';
import type { RouteRow, RouteTable } from './route.js';

/*
 * The OpenAPI 3.1 document of the `/v1` routes, generated from the route table: every row is one
 * operation, its path parameters come from the row's path, its query parameters and request body
 * from the row's zod schemas (the same ones that validate requests, so the document cannot drift
 * from what the gateway accepts), and its summary from the description of the GraphQL field the
 * row's operation calls. Response bodies are the operations' results and are not described.
 */

type Json = Record<string, unknown>;

const ERROR_REF = { $ref: '#/components/responses/Error' };

/** The three ways a key may be sent (docs/contract.md#authentication-and-workspaces); any one is enough. */
const SECURITY_SCHEMES = {
  gatewayApiKey: { type: 'apiKey', in: 'header', name: 'x-gateway-api-key' },
  portkeyApiKey: { type: 'apiKey', in: 'header', name: 'x-portkey-api-key' },
  bearer: { type: 'http', scheme: 'bearer', description: 'The gateway API key as a bearer token.' },
};

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'param', 'code'],
      properties: {
        message: { type: 'string' },
        type: { type: 'string' },
        param: { type: ['string', 'null'], description: 'The request parameter at fault, as a wire path (`messages[0].content`).' },
        code: { type: ['string', 'null'], description: 'A registered error code (README: Errors).' },
      },
    },
  },
};

export function openApiDocument(table: RouteTable): Json {
  const paths: Record<string, Json> = {};
  const schemas: Record<string, unknown> = { Error: ERROR_SCHEMA };
  const ids = new Set<string>();
  const named = new Set<string>();
  for (const row of table.rows) {
    const operation = namingOperation(row, named);
    const id = operationId(row, operation);
    if (ids.has(id)) throw new Error(`Two routes have the operation id ${id}.`);
    ids.add(id);
    const path = row.path.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][row.method.toLowerCase()] = operationObject(row, id, operation, table, schemas);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse',
      version: packageVersion(),
      description: 'The REST API of a Gatehouse gateway, generated from its route table. Every non-2xx answer is the error envelope `{"error": {"message", "type", "param", "code"}}`.',
    },
    paths,
    components: {
      schemas,
      responses: { Error: { description: 'The error envelope.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
      securitySchemes: SECURITY_SCHEMES,
    },
    security: Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] })),
  };
}

function operationObject(row: RouteRow, id: string, operationName: string | undefined, table: RouteTable, schemas: Record<string, unknown>): Json {
  const parameters: Json[] = [...row.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
  if (row.query) parameters.push(...queryParameters(row, jsonSchema(row.query)));
  for (const [name, header] of Object.entries(row.headers ?? {})) {
    parameters.push({ name, in: 'header', required: header.required ?? false, description: header.description, schema: { type: 'string' } });
  }
  const { summary, description } = describe(row, operationName, table);
  const operation: Json = { operationId: id, tags: [tagOf(row.path)], summary };
  if (description) operation.description = description;
  if (parameters.length) operation.parameters = parameters;
  if (row.body) {
    const name = `${id[0].toUpperCase()}${id.slice(1)}Request`;
    schemas[name] = jsonSchema(row.body);
    // The layer reads a missing body as `{}`: the body is required only when `{}` is refused.
    operation.requestBody = { required: !row.body.safeParse({}).success, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } };
  }
  const content: Json = { 'application/json': { schema: {} } };
  if (row.stream) content['text/event-stream'] = { schema: { type: 'string' } };
  const responses: Json = { [String(row.status ?? 200)]: { description: row.stream ? 'The result, or a stream of server-sent events.' : 'The result.', content } };
  if (row.document) {
    operation.security = [];
  } else {
    if (row.body || row.query || parameters.length) responses['400'] = ERROR_REF;
    responses['401'] = ERROR_REF;
  }
  responses.default = ERROR_REF;
  operation.responses = responses;
  return operation;
}

/**
 * The GraphQL operation a row is named and described after: its own, or, when an earlier row has
 * that one (the run events stream reads the run first), the operation it streams.
 */
function namingOperation(row: RouteRow, named: Set<string>): string | undefined {
  const operation = row.operation && named.has(row.operation) ? (row.stream?.operation ?? row.operation) : row.operation;
  if (operation) named.add(operation);
  return operation;
}

/** `RestCreateIntegration` → `createIntegration`; a row without an operation is named for its method and path. */
function operationId(row: RouteRow, operation: string | undefined): string {
  const name = operation?.replace(/^Rest/, '') ?? `${row.method.toLowerCase()}${pathWords(row.path)}`;
  return name[0].toLowerCase() + name.slice(1);
}

/** `/v1/openapi.json` → `Openapi`: the path's words after `/v1`, without parameters or extension. */
function pathWords(path: string): string {
  const words = path.replace(/^\/v1\//, '').replace(/\.\w+$/, '').split(/[/_-]/);
  return words
    .filter((word) => word && !word.startsWith(':'))
    .map((word) => word[0].toUpperCase() + word.slice(1).toLowerCase())
    .join('');
}

/** `/v1/integrations/:slug/workspaces` → `integrations`. */
function tagOf(path: string): string {
  return path.split('/')[2].replace(/\.json$/, '');
}

function jsonSchema(schema: ZodType): Json {
  // `none`: every schema inline (no recursion in the contracts); `output` for pipes: a query
  // integer is documented as the integer it becomes, a checked list as its items; only objects
  // marked `.strict()` refuse unknown keys, so only they say `additionalProperties: false`.
  // Target draft-07: its keywords as this generator writes them mean the same in 2020-12
  // (numeric `exclusiveMinimum`), while its `jsonSchema2019-09` target writes the draft-4 boolean
  // form for `.positive()`, which 2020-12 rejects.
  const { $schema: _dialect, ...json } = zodToJsonSchema(schema, { $refStrategy: 'none', pipeStrategy: 'output', removeAdditionalStrategy: 'strict', target: 'jsonSchema7' }) as Json;
  return json;
}

function queryParameters(row: RouteRow, schema: Json): Json[] {
  const properties = schema.properties as Record<string, Json> | undefined;
  if (schema.type !== 'object' || !properties) throw new Error(`The query schema of ${row.method} ${row.path} is not an object.`);
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, { description, ...property }]) => ({
    name,
    in: 'query',
    required: required.has(name),
    ...(description ? { description } : {}),
    schema: property,
  }));
}

/** The summary (first sentence) and description of the GraphQL field the row's operation calls. */
function describe(row: RouteRow, operationName: string | undefined, table: RouteTable): { summary: string; description?: string } {
  const text = row.summary ?? fieldDescription(operationName, table) ?? `${row.method} ${row.path}`;
  const sentence = /^.*?\.(?=\s|$)/s.exec(text)?.[0] ?? text;
  return sentence === text ? { summary: text } : { summary: sentence, description: text };
}

/**
 * The description of the field an operation reads: its first root field, or, where that field only
 * leads to one other (`run { steps(...) }` lists a run's steps), the innermost such field.
 */
function fieldDescription(operationName: string | undefined, table: RouteTable): string | undefined {
  const operation = operationName ? table.operations.get(operationName) : undefined;
  const definition = operation?.document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation || definition?.kind !== Kind.OPERATION_DEFINITION) return undefined;
  let type = operation.kind === 'query' ? table.schema.getQueryType() : operation.kind === 'mutation' ? table.schema.getMutationType() : table.schema.getSubscriptionType();
  let selections = definition.selectionSet.selections;
  let description: string | undefined;
  for (let node = selections.find((s) => s.kind === Kind.FIELD); node?.kind === Kind.FIELD && type; ) {
    const field: GraphQLField<unknown, unknown> | undefined = type.getFields()[node.name.value];
    if (!field) break;
    description = field.description ?? description;
    const named = getNamedType(field.type);
    selections = node.selectionSet?.selections ?? [];
    const only = selections.length === 1 && selections[0].kind === Kind.FIELD ? selections[0] : undefined;
    type = only && isObjectType(named) ? named : null;
    node = only;
  }
  return description;
}

let version: string | undefined;

/** The package's version, from the package.json above this file (in the source tree or in `dist/`). */
function packageVersion(): string {
  if (version) return version;
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) return (version = String(JSON.parse(readFileSync(file, 'utf8')).version));
  }
  throw new Error('package.json not found above rest/openapi.ts.');
}
