/**
 * GET /v1/openapi.json: generated from the route table and the rows' zod schemas. It must be a
 * valid OpenAPI 3.1 document (the OpenAPI Initiative's own JSON Schema, vendored beside this file),
 * name every row of the table and nothing else, resolve every $ref, hold only valid JSON Schema
 * 2020-12 schemas, and accept every request body the gateway itself accepts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOperations } from '../../rest/documents.js';
import { openApiDocument } from '../../rest/openapi.js';
import type { RouteRow } from '../../rest/route.js';
import { routes } from '../../rest/routes.js';
import { schema } from '../../schema/index.js';
import { arbitraryFor } from '../property/zod-arbitrary.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * Ajv resolves `$dynamicRef` only partly; in this schema the one dynamic anchor (`meta`) is
 * `$defs/schema`, so each `$dynamicRef: "#meta"` is the plain `$ref` to it (the vendored file
 * itself stays unchanged).
 */
const oasSchema = JSON.parse(readFileSync(join(import.meta.dirname, 'oas-3.1-schema.json'), 'utf8').replaceAll('"$dynamicRef": "#meta"', '"$ref": "#/$defs/schema"'));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await createTestApp();
  const r = await t.request('GET', '/v1/openapi.json', { key: null });
  expect(r.status, r.text).toBe(200);
  doc = r.body;
});
afterAll(() => t.close());

const ajv = () => new Ajv2020({ strict: false, validateFormats: false, allErrors: true });

/** `#/components/schemas/X` → the value it points at, or undefined. */
function resolve(ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<any>((node, part) => (node == null ? undefined : node[part]), doc);
}

function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => refsIn(item, out));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push(value);
      else refsIn(value, out);
    }
  }
  return out;
}

/** Every Schema Object of the document: components, parameters, and media types written inline. */
function schemaObjects(): Array<[string, object]> {
  const out: Array<[string, object]> = Object.entries(doc.components.schemas).map(([name, s]) => [`components.schemas.${name}`, s as object]);
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      for (const p of op.parameters ?? []) out.push([`${method} ${path} ${p.name}`, p.schema]);
      for (const [status, response] of Object.entries<any>(op.responses)) {
        for (const [type, media] of Object.entries<any>(response.content ?? {})) out.push([`${method} ${path} ${status} ${type}`, media.schema]);
      }
    }
  }
  return out;
}

const bodySchemaOf = (row: RouteRow) => {
  const op = doc.paths[row.path.replace(/:(\w+)/g, '{$1}')][row.method.toLowerCase()];
  return resolve(op.requestBody.content['application/json'].schema.$ref) as object;
};

describe('GET /v1/openapi.json', () => {
  it('answers without an API key, and with a wrong one, as JSON', async () => {
    const bad = await t.request('GET', '/v1/openapi.json', { key: 'not-a-key-at-all' });
    expect(bad.status).toBe(200);
    expect(bad.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(bad.body).toEqual(doc);
    // Only the document is public.
    expect((await t.request('GET', '/v1/admin/workspaces', { key: null })).status).toBe(401);
  });

  it('validates against the OpenAPI 3.1 schema', () => {
    const validate = ajv().compile(oasSchema);
    const valid = validate(doc);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    // The validator does refuse: a parameter without its place, an operation without responses.
    const spoiled = structuredClone(doc);
    delete spoiled.paths['/v1/admin/workspaces/{id}'].get.parameters[0].in;
    expect(validate(spoiled)).toBe(false);
    const noResponses = structuredClone(doc);
    noResponses.paths['/v1/logs'].get.responses = [];
    expect(validate(noResponses)).toBe(false);
    expect(doc.info.version).toBe(JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')).version);
  });

  it('has exactly one operation for every row of the route table, with a unique operationId and a summary', () => {
    const documented = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => METHODS.includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    const table = routes.map((row) => `${row.method} ${row.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(documented.sort()).toEqual([...table].sort());
    const operations = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item));
    const ids = operations.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const op of operations) expect(op.summary, op.operationId).toMatch(/\S/);
    expect(doc.paths['/v1/collections/{collectionId}'].get.operationId).toBe('getCollection');
    expect(doc.paths['/v1/openapi.json'].get).toMatchObject({ operationId: 'getOpenapi', tags: ['openapi'], security: [] });
  });

  it('resolves every $ref', () => {
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(routes.length);
    expect(refs.filter((ref) => resolve(ref) === undefined)).toEqual([]);
  });

  it('holds only schemas that are valid JSON Schema 2020-12', () => {
    const checker = ajv();
    const invalid = schemaObjects().flatMap(([where, s]) => (checker.validateSchema(s) ? [] : [`${where}: ${checker.errorsText()}`]));
    expect(invalid).toEqual([]);
  });

  it('puts every path parameter, query parameter and body of a row in its operation', () => {
    for (const row of routes) {
      const op = doc.paths[row.path.replace(/:(\w+)/g, '{$1}')][row.method.toLowerCase()];
      const params = (op.parameters ?? []).map((p: any) => `${p.in}:${p.name}`);
      const expected = [...row.path.matchAll(/:(\w+)/g)].map((m) => `path:${m[1]}`);
      if (row.query) expected.push(...Object.keys((row.query as z.AnyZodObject).shape ?? {}).map((name) => `query:${name}`));
      expected.push(...Object.keys(row.headers ?? {}).map((name) => `header:${name}`));
      expect(params.sort(), `${row.method} ${row.path}`).toEqual(expected.sort());
      expect(op.requestBody !== undefined, `${row.method} ${row.path} body`).toBe(row.body !== undefined);
      expect(op.security, `${row.method} ${row.path} security`).toEqual(row.document ? [] : undefined);
    }
    const logs = doc.paths['/v1/logs'].get.parameters.find((p: any) => p.name === 'limit');
    expect(logs).toMatchObject({ in: 'query', required: false, schema: { type: 'integer' } });
    expect(doc.paths['/v1/chat/completions'].post.parameters.map((p: any) => `${p.in}:${p.name}:${p.required}`)).toEqual(['header:x-gateway-virtual-key:false', 'header:x-gateway-metadata:false']);
    // The runs routes' beta header, which they refuse a request without.
    const beta = { name: 'OpenAI-Beta', in: 'header', required: true, schema: { type: 'string' } };
    expect(doc.paths['/v1/assistants'].post.parameters).toEqual([expect.objectContaining(beta)]);
    expect(doc.paths['/v1/threads/{thread_id}/runs/{run_id}/events'].get.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining(beta), expect.objectContaining({ name: 'Last-Event-ID', in: 'header', required: false })]),
    );
  });

  it('accepts every request body the route itself accepts (generated from its zod schema)', () => {
    const checker = ajv();
    for (const row of routes.filter((r) => r.body)) {
      const validate = checker.compile(bodySchemaOf(row));
      const accepted = fc.sample(arbitraryFor(row.body!), { numRuns: 40, seed: 18 }).filter((value) => row.body!.safeParse(value).success);
      for (const value of accepted) expect(validate(value), `${row.method} ${row.path} ${JSON.stringify(value)}: ${checker.errorsText(validate.errors)}`).toBe(true);
    }
    // And refuses what the contract refuses by type: a policy without its conditions.
    const policies = routes.find((r) => r.method === 'POST' && r.path === '/v1/policies/usage-limits')!;
    const validate = checker.compile(bodySchemaOf(policies));
    expect(validate({ group_by: [{ key: 'api_key' }], type: 'cost', credit_limit: 1 })).toBe(false);
    expect(validate({ conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }], type: 'cost', credit_limit: 1 })).toBe(true);
  });
});

describe('openApiDocument', () => {
  const table = { rows: routes, schema, operations: loadOperations(schema) };

  it('is generated from the rows it is given: a new row appears with its parameters and body', () => {
    const row: RouteRow = {
      method: 'POST',
      path: '/v1/widgets/:widget_id/polish',
      operation: 'RestPolishWidget',
      query: z.object({ dry_run: z.enum(['yes', 'no']).optional() }),
      body: z.object({ shine: z.number().int().min(1).max(10).describe('How much.') }).strict(),
      status: 201,
    };
    const generated: any = openApiDocument({ ...table, rows: [...routes, row] });
    const op = generated.paths['/v1/widgets/{widget_id}/polish'].post;
    expect(op).toMatchObject({
      operationId: 'polishWidget',
      tags: ['widgets'],
      // No GraphQL field to describe it: the method and path.
      summary: 'POST /v1/widgets/:widget_id/polish',
      parameters: [
        { name: 'widget_id', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'dry_run', in: 'query', required: false, schema: { type: 'string', enum: ['yes', 'no'] } },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/PolishWidgetRequest' } } } },
    });
    expect(Object.keys(op.responses)).toEqual(['201', '400', '401', 'default']);
    expect(generated.components.schemas.PolishWidgetRequest).toEqual({
      type: 'object',
      properties: { shine: { type: 'integer', minimum: 1, maximum: 10, description: 'How much.' } },
      required: ['shine'],
      additionalProperties: false,
    });
  });

  it('takes summaries from the GraphQL fields the operations call', () => {
    const field = schema.getQueryType()!.getFields().workspaces;
    const op = (openApiDocument(table) as any).paths['/v1/admin/workspaces'].get;
    expect(field.description).toBeTruthy();
    expect(op.summary).toBe(/^.*?\.(?=\s|$)/s.exec(field.description!)?.[0] ?? field.description);
  });

  it('refuses two rows with one operation id', () => {
    const twice = routes.find((r) => r.operation === 'RestListWorkspaces')!;
    expect(() => openApiDocument({ ...table, rows: [twice, { ...twice, path: '/v1/other' }] })).toThrow('Two routes have the operation id listWorkspaces.');
  });
});
