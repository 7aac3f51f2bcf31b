/**
 * GraphQL input types derived from operation contracts (src/modules/<domain>/*.contract.ts): one
 * field per wire key, named in camelCase, typed from the schema (String, Int, Float, Boolean; JSON
 * for anything polymorphic), described by the schema's `describe` text. Every field is optional in
 * GraphQL: the contract decides what is required, so a missing field gets the same wire message
 * on both front doors. The key-case conversions both ways live here and nowhere else.
 */
import { z, type AnyZodObject, type ZodTypeAny } from 'zod';
import { parseContract } from '../src/lib/contract.js';
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

/** Per contract, the fields that are lists of typed input objects (their keys are re-cased too). */
const typedLists = new WeakMap<AnyZodObject, Set<string>>();

/** The object schema of a field that is a list of typed input objects (`tool_outputs`), if it is one. */
function listedObject(schema: ZodTypeAny): AnyZodObject | null {
  const list = core(schema);
  if (!(list instanceof z.ZodArray)) return null;
  const item = core(list.element);
  return item instanceof z.ZodObject ? item : null;
}

function scalarOf(schema: ZodTypeAny): 'String' | 'Int' | 'Float' | 'Boolean' | 'JSON' {
  const inner = core(schema);
  if (inner instanceof z.ZodString || inner instanceof z.ZodEnum) return 'String';
  if (inner instanceof z.ZodBoolean) return 'Boolean';
  if (inner instanceof z.ZodNumber) return inner._def.checks.some((check) => check.kind === 'int') ? 'Int' : 'Float';
  return 'JSON';
}

/**
 * The GraphQL input type of a contract. `lists` names the input types of fields that are lists of
 * objects (`{ tool_outputs: ['ToolOutputInput', 'The output of one tool call.'] }`); any other
 * object is JSON in wire shape.
 */
export function contractInputType(name: string, description: string, contract: AnyZodObject, lists: Record<string, [string, string]> = {}): ContractInputRef {
  typedLists.set(contract, new Set(Object.keys(lists)));
  const nested: Record<string, ContractInputRef> = Object.fromEntries(
    Object.entries(lists).map(([key, [itemName, itemDescription]]) => [key, contractInputType(itemName, itemDescription, listedObject(contract.shape[key])!)]),
  );
  return builder.inputType(name, {
    description,
    fields: (t) =>
      Object.fromEntries(
        Object.entries(contract.shape as Record<string, ZodTypeAny>).map(([key, field]) => {
          const options = { description: field.description ?? key };
          if (nested[key]) return [camelCase(key), t.field({ type: [nested[key]], ...options })];
          return [camelCase(key), t.field({ type: scalarOf(field), ...options })];
        }),
      ) as any,
  }) as unknown as ContractInputRef;
}

/** Re-keys a contract's fields between wire names and GraphQL names; JSON values stay as they are. */
function rekey(contract: AnyZodObject, value: unknown, toWire: boolean): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(contract.shape as Record<string, ZodTypeAny>)) {
    const from = toWire ? camelCase(key) : key;
    if (!(from in source)) continue;
    const item = typedLists.get(contract)?.has(key) ? listedObject(field) : null;
    const raw = source[from];
    out[toWire ? key : camelCase(key)] = item && Array.isArray(raw) ? raw.map((entry) => rekey(item, entry, toWire)) : raw;
  }
  return out;
}

/** A GraphQL input, parsed by its contract (the contract's 400 when it does not hold). */
export function parseInput<S extends AnyZodObject>(contract: S, input: unknown): z.output<S> {
  return parseContract(contract, rekey(contract, input ?? {}, true));
}

/** A REST body in wire terms → the GraphQL input of the same contract (keys it does not know are left out). */
export function graphqlInput(contract: AnyZodObject, body: unknown): Record<string, unknown> {
  return rekey(contract, body, false) as Record<string, unknown>;
}
