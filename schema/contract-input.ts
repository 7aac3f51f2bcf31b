/**
 * GraphQL input types derived from operation contracts (src/modules/<domain>/*.contract.ts): one
 * field per wire key, named in camelCase, typed from the schema (String, Int, Float, Boolean; JSON
 * for anything polymorphic), described by the schema's `describe` text. Every field is optional in
 * GraphQL: the contract decides what is required, so a missing field gets the same wire message
 * on both front doors. The key-case conversions both ways live here and nowhere else.
 */
import { z, type AnyZodObject, type ZodTypeAny } from 'zod';
import { parseContract } from '../src/lib/contract.js';
import type { RequestContext } from '../src/context.js';
import type { InputObjectRef } from '@pothos/core';
import { builder } from './builder.js';

type SchemaTypesOf = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
type ContractInputRef = InputObjectRef<SchemaTypesOf, Record<string, unknown>>;

export const camelCase = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The schema under its optional / nullable / default / refinement / pipeline wrappers. */
function core(schema: ZodTypeAny): ZodTypeAny {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) return core(schema._def.innerType);
  if (schema instanceof z.ZodEffects) return core(schema._def.schema);
  if (schema instanceof z.ZodPipeline) return core(schema._def.out);
  return schema;
}

/** Per contract, the fields that are typed input objects or lists of them (their keys are re-cased too). */
const typedFields = new WeakMap<AnyZodObject, Set<string>>();

/** The object schema of a field that is an object or a list of objects (`tool_outputs`), if it is one. */
function nestedObject(schema: ZodTypeAny): { object: AnyZodObject; list: boolean } | null {
  const field = core(schema);
  if (field instanceof z.ZodObject) return { object: field, list: false };
  if (!(field instanceof z.ZodArray)) return null;
  const item = core(field.element);
  return item instanceof z.ZodObject ? { object: item, list: true } : null;
}

const inputTypes = new Map<string, ContractInputRef>();

/** A typed nested input: its GraphQL name, description, and its own typed fields. */
export type NestedInput = readonly [name: string, description: string, fields?: Readonly<Record<string, NestedInput>>];

function scalarOf(schema: ZodTypeAny): 'String' | 'Int' | 'Float' | 'Boolean' | 'JSON' {
  const inner = core(schema);
  if (inner instanceof z.ZodString || inner instanceof z.ZodEnum) return 'String';
  if (inner instanceof z.ZodBoolean) return 'Boolean';
  if (inner instanceof z.ZodNumber) return inner._def.checks.some((check) => check.kind === 'int') ? 'Int' : 'Float';
  return 'JSON';
}

/**
 * The GraphQL input type of a contract. `typed` names the input types of fields that are objects or
 * lists of objects (`{ tool_outputs: ['ToolOutputInput', 'The output of one tool call.'] }`, with
 * their own typed fields third); any other object is JSON in wire shape.
 */
export function contractInputType(name: string, description: string, contract: AnyZodObject, typed: Readonly<Record<string, NestedInput>> = {}): ContractInputRef {
  // A nested type used twice (on_success and on_fail share one) is built once.
  const built = inputTypes.get(name);
  if (built) return built;
  typedFields.set(contract, new Set(Object.keys(typed)));
  const nested: Record<string, ContractInputRef> = Object.fromEntries(
    Object.entries(typed).map(([key, [itemName, itemDescription, fields]]) => [key, contractInputType(itemName, itemDescription, nestedObject(contract.shape[key])!.object, fields)]),
  );
  const ref = builder.inputType(name, {
    description,
    fields: (t) =>
      Object.fromEntries(
        Object.entries(contract.shape as Record<string, ZodTypeAny>).map(([key, field]) => {
          const options = { description: field.description ?? key };
          if (nested[key]) return [camelCase(key), t.field({ type: nestedObject(field)!.list ? [nested[key]] : nested[key], ...options })];
          const inner = core(field);
          // A list of scalars is a typed list (`[String]`); a list of anything else is JSON.
          if (inner instanceof z.ZodArray && scalarOf(inner.element) !== 'JSON') return [camelCase(key), t.field({ type: [scalarOf(inner.element)], ...options })];
          return [camelCase(key), t.field({ type: scalarOf(field), ...options })];
        }),
      ) as any,
  }) as unknown as ContractInputRef;
  inputTypes.set(name, ref);
  return ref;
}

/** Re-keys a contract's fields between wire names and GraphQL names; JSON values stay as they are. */
function rekey(contract: AnyZodObject, value: unknown, toWire: boolean): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(contract.shape as Record<string, ZodTypeAny>)) {
    const from = toWire ? camelCase(key) : key;
    if (!(from in source)) continue;
    const item = typedFields.get(contract)?.has(key) ? nestedObject(field)!.object : null;
    const raw = source[from];
    out[toWire ? key : camelCase(key)] = !item ? raw : Array.isArray(raw) ? raw.map((entry) => rekey(item, entry, toWire)) : rekey(item, raw, toWire);
  }
  return out;
}

/**
 * A GraphQL input, parsed by its contract (the contract's 400 when it does not hold). With the
 * resolver's context: a body the request's REST row has parsed with this contract (`parsedInput`
 * left it on the context) is taken as parsed, rather than its GraphQL input, which is the same body
 * re-keyed, parsed a second time (a run's body was parsed twice per request).
 */
export function parseInput<S extends AnyZodObject>(contract: S, input: unknown, ctx?: Pick<RequestContext, 'parsedBodies'>): z.output<S> {
  const parsed = ctx?.parsedBodies?.get(contract);
  if (parsed) return parsed as z.output<S>;
  return parseContract(contract, rekey(contract, input ?? {}, true));
}

/** A REST body in wire terms → the GraphQL input of the same contract (keys it does not know are left out). */
export function graphqlInput(contract: AnyZodObject, body: unknown): Record<string, unknown> {
  return rekey(contract, body, false) as Record<string, unknown>;
}

/**
 * `graphqlInput` of a body the REST row has parsed with `contract` (its `body` schema is the
 * contract, possibly extended): the parsed body, its keys limited to the contract's, is left on the
 * request's context, where the resolver's `parseInput(contract, input, ctx)` takes it instead of
 * parsing again. The context lives as long as the request's execution, no longer.
 */
export function parsedInput(contract: AnyZodObject, rest: { body: unknown; context: Pick<RequestContext, 'parsedBodies'> }): Record<string, unknown> {
  const body = rest.body as Record<string, unknown>;
  const parsed: Record<string, unknown> = {};
  for (const key of Object.keys(contract.shape)) if (key in body) parsed[key] = body[key];
  (rest.context.parsedBodies ??= new Map()).set(contract, parsed);
  return graphqlInput(contract, body);
}
