/**
 * The published OpenAI (OpenAPI 3.1) and Portkey (OpenAPI 3.0) documents, read from
 * `documents/` and turned into JSON Schema 2020-12 that ajv compiles, closed to extra keys:
 *
 * - `nullable: true` (OpenAPI 3.0's spelling, which the OpenAI document uses too) becomes a
 *   `"null"` type, and boolean `exclusiveMinimum`/`exclusiveMaximum` become numbers.
 * - Every schema with `properties` or `allOf` and no word of its own on extra keys gets
 *   `unevaluatedProperties: false`. `unevaluatedProperties` (not `additionalProperties`) so that a
 *   schema composed with `allOf` accepts the keys of all its parts; a named schema used as an
 *   `allOf` part is referenced through an open copy (`<Name>__open`), so that the part does not
 *   refuse its siblings' keys while the composition as a whole stays closed.
 * - `oneOf` is read as `anyOf`: the documents use it for "one of these shapes", and their variants
 *   overlap where another field picks the variant (an empty object fits every all-optional
 *   configuration of an integration; Portkey's guardrail check parameters end with a variant that
 *   accepts any object), so "exactly one" could not hold for answers the documents describe.
 * - Schemas that say `additionalProperties: true` (or give a schema for it), or an `object` with no
 *   `properties` (maps such as `metadata`), stay open: the document allows extra keys there.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { parse } from 'yaml';

export type DocumentName = 'openai' | 'portkey';

export interface Operation {
  document: DocumentName;
  method: string;
  /** The document's path template, without the server's `/v1`, e.g. `/threads/{thread_id}`. */
  template: string;
}

type Json = any;

const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_ONES = ['items', 'additionalProperties', 'unevaluatedProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'];

/** Applies `visit` to a schema and every subschema below it (depth first, children first). */
function eachSchema(schema: Json, visit: (schema: Json) => Json): Json {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  for (const key of SCHEMA_MAPS) {
    if (schema[key] && typeof schema[key] === 'object') for (const name of Object.keys(schema[key])) schema[key][name] = eachSchema(schema[key][name], visit);
  }
  for (const key of SCHEMA_LISTS) if (Array.isArray(schema[key])) schema[key] = schema[key].map((s: Json) => eachSchema(s, visit));
  for (const key of SCHEMA_ONES) if (schema[key] && typeof schema[key] === 'object') schema[key] = eachSchema(schema[key], visit);
  return visit(schema);
}

/** OpenAPI's `nullable` and boolean exclusive bounds, in JSON Schema 2020-12. */
function toJsonSchema(schema: Json): Json {
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof schema[flag] === 'boolean') {
      if (schema[flag] && schema[bound] !== undefined) schema[flag] = schema[bound];
      else delete schema[flag];
      if (typeof schema[flag] === 'number') delete schema[bound];
    }
  }
  if (schema.nullable !== true) {
    delete schema.nullable;
    return schema;
  }
  delete schema.nullable;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (Array.isArray(schema.type)) return { ...schema, type: [...new Set([...schema.type, 'null'])] };
  return { anyOf: [schema, { type: 'null' }] };
}

const opensItself = (schema: Json) => ['additionalProperties', 'unevaluatedProperties', 'patternProperties'].some((key) => key in schema);

/** The response schemas of every operation and all of components.schemas, each closed. */
function prepare(document: Json): Json {
  const schemas: Record<string, Json> = document.components?.schemas ?? {};
  const roots: { holder: Json; key: string }[] = Object.keys(schemas).map((key) => ({ holder: schemas, key }));
  const responseHolders = [
    ...Object.values(document.components?.responses ?? {}),
    ...Object.values(document.paths ?? {}).flatMap((item: Json) => Object.values(item ?? {}).flatMap((op: Json) => Object.values(op?.responses ?? {}))),
  ];
  for (const response of responseHolders as Json[]) {
    for (const media of Object.values(response?.content ?? {}) as Json[]) if (media?.schema) roots.push({ holder: media, key: 'schema' });
  }

  // Named schemas used as allOf parts are referenced through an open copy; inline parts stay open.
  const parts = new Set<Json>();
  const partNames = new Set<string>();
  const closed = new Set<Json>();
  for (const { holder, key } of roots) {
    holder[key] = eachSchema(holder[key], (schema) => {
      const converted = toJsonSchema(schema);
      if (Array.isArray(converted.oneOf)) {
        converted.anyOf = converted.oneOf;
        delete converted.oneOf;
      }
      for (const part of converted.allOf ?? []) {
        const name = typeof part.$ref === 'string' ? /^#\/components\/schemas\/([^/]+)$/.exec(part.$ref)?.[1] : undefined;
        if (name) {
          partNames.add(name);
          part.$ref = `#/components/schemas/${name}__open`;
        } else parts.add(part);
      }
      return converted;
    });
  }
  for (const { holder, key } of roots) {
    eachSchema(holder[key], (schema) => {
      if ((schema.properties || schema.allOf) && !opensItself(schema) && !parts.has(schema)) {
        schema.unevaluatedProperties = false;
        closed.add(schema);
      }
      return schema;
    });
  }
  for (const name of partNames) {
    const { unevaluatedProperties, ...open } = schemas[name];
    schemas[`${name}__open`] = closed.has(schemas[name]) ? open : { ...open, ...(unevaluatedProperties === undefined ? {} : { unevaluatedProperties }) };
  }
  return document;
}

const here = import.meta.dirname;
const escapePointer = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');

export interface Documents {
  /** The document operation a concrete `/v1/...` request answers, if any document has it. */
  operationFor(method: string, path: string): Operation | undefined;
  /** Every operation of both documents. */
  operations: Operation[];
  /** The document describes this status of the operation (with or without a body). */
  hasStatus(operation: Operation, status: number): boolean;
  /** The validator of an operation's `status` response in `mediaType`, if the document gives a schema. */
  responseValidator(operation: Operation, status: number, mediaType: string): ValidateFunction | undefined;
  /** The validator of one named component schema of a document. */
  schemaValidator(document: DocumentName, name: string): ValidateFunction;
  /** The validator of the schema a document-local `$ref` (`#/...`) points at. */
  refValidator(document: DocumentName, ref: string): ValidateFunction;
  /** The raw (prepared) document. */
  document(name: DocumentName): Json;
}

function templateRegex(template: string): RegExp {
  const source = template
    .split('/')
    .map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

const literalSegments = (template: string) => template.split('/').filter((s) => s && !s.startsWith('{')).length;

function load(): Documents {
  const docs: Record<DocumentName, Json> = {
    openai: prepare(parse(readFileSync(join(here, 'documents', 'openai-openapi.yaml'), 'utf8'), { maxAliasCount: -1 })),
    portkey: prepare(parse(readFileSync(join(here, 'documents', 'portkey-openapi.yaml'), 'utf8'), { maxAliasCount: -1 })),
  };
  // The documents are not JSON Schemas themselves, only hold them: no meta-validation, unknown
  // keywords (`example`, `discriminator`, `x-*`) ignored, formats not checked.
  const ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false, allErrors: true, verbose: true, logger: false });
  for (const name of Object.keys(docs) as DocumentName[]) ajv.addSchema(docs[name], name);

  // The OpenAI document first: the Portkey one repeats some OpenAI routes, and OpenAI's are the source.
  const operations: (Operation & { regex: RegExp })[] = (['openai', 'portkey'] as const).flatMap((document) =>
    Object.entries(docs[document].paths as Record<string, Json>).flatMap(([template, item]) =>
      ['get', 'post', 'put', 'delete', 'patch']
        .filter((method) => item[method])
        .map((method) => ({ document, method: method.toUpperCase(), template, regex: templateRegex(template) })),
    ),
  );
  const cache = new Map<string, ValidateFunction | undefined>();
  const compiled = (ref: string) => {
    if (!cache.has(ref)) cache.set(ref, ajv.compile({ $ref: ref }));
    return cache.get(ref)!;
  };

  return {
    operations: operations.map(({ document, method, template }) => ({ document, method, template })),
    operationFor(method, path) {
      const bare = path.split('?')[0].replace(/^\/v1(?=\/)/, '');
      const matches = operations.filter((op) => op.method === method && op.regex.test(bare));
      if (matches.length === 0) return undefined;
      // `/threads/runs` is both a literal path and `/threads/{thread_id}`: the literal one wins.
      const best = matches.reduce((a, b) => (literalSegments(b.template) > literalSegments(a.template) || (literalSegments(b.template) === literalSegments(a.template) && a.document !== 'openai' && b.document === 'openai') ? b : a));
      return { document: best.document, method: best.method, template: best.template };
    },
    hasStatus: (operation, status) => String(status) in (docs[operation.document].paths[operation.template]?.[operation.method.toLowerCase()]?.responses ?? {}),
    responseValidator(operation, status, mediaType) {
      let pointer = `#/paths/${escapePointer(operation.template)}/${operation.method.toLowerCase()}/responses/${status}`;
      let response = docs[operation.document].paths[operation.template]?.[operation.method.toLowerCase()]?.responses?.[String(status)];
      if (response?.$ref) {
        pointer = response.$ref;
        response = response.$ref.split('/').slice(1).reduce((node: Json, part: string) => node?.[part], docs[operation.document]);
      }
      if (!response?.content?.[mediaType]?.schema) return undefined;
      return compiled(`${operation.document}${pointer}/content/${escapePointer(mediaType)}/schema`);
    },
    schemaValidator(document, name) {
      if (!docs[document].components.schemas[name]) throw new Error(`${document} has no schema ${name}`);
      return compiled(`${document}#/components/schemas/${escapePointer(name)}`)!;
    },
    refValidator: (document, ref) => compiled(`${document}${ref}`)!,
    document: (name) => docs[name],
  };
}

let loaded: Documents | undefined;

/** Both documents, read and prepared once per process (reading them takes a few seconds). */
export function documents(): Documents {
  loaded ??= load();
  return loaded;
}
