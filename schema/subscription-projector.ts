import {
  defaultFieldResolver,
  getArgumentValues,
  getNullableType,
  getOperationAST,
  getVariableValues,
  isLeafType,
  isNonNullType,
  isObjectType,
  Kind,
  validateSchema,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { isPromiseLike } from '../src/lib/promise-like.js';

/**
 * Results of a subscription's events built straight from the payload, for selections graphql-js
 * would resolve by reading properties: a run event's `{ sequence event data }`, a chat chunk's
 * JSON. graphql-js's `execute` costs several times the reading itself (an execution context, a
 * path and an info object per field, promise checks): ~6% of a streamed run's CPU, and a chat
 * stream executes once per chunk.
 *
 * A projector is compiled once per schema, document and operation; it applies only where its
 * result is certainly graphql-js's own, and otherwise answers `undefined` so the caller executes:
 * - compiled only when every field under the root field is a field of an object type without
 *   `isTypeOf`, with graphql-js's default resolver, no arguments (neither declared nor given)
 *   and no directives, each response key once, no fragments, no lists, no abstract types; leaves
 *   are serialised by their own scalar's or enum's `serialize`. `__typename` is the type's name.
 * - per payload, anything graphql-js would report as an error (a null for a non-null type, a
 *   value that does not serialise, an Error value, a property that is a function, which the
 *   default resolver would call) makes the projector answer `undefined`: graphql-js then builds
 *   that result, with its errors, itself. The root field's resolver then runs once more for that
 *   payload (subscription root resolvers map the payload; `(event) => event` here).
 * - a root resolver that answers a promise turns the projector off for the document.
 *
 * Objects are made as graphql-js makes them (no prototype), in the selection's order.
 */
export type Projector = (payload: unknown) => ExecutionResult | undefined;

/** How one value is completed: a leaf serialised, or an object's fields read. */
type Shape =
  | { kind: 'leaf'; nonNull: boolean; type: GraphQLLeafType }
  | { kind: 'object'; nonNull: boolean; fields: FieldPlan[] };

type FieldPlan = { key: string; name: string; typename: false; shape: Shape } | { key: string; typename: true; value: string };

interface Plan {
  operation: OperationDefinitionNode;
  rootType: GraphQLObjectType;
  field: GraphQLField<unknown, unknown>;
  node: FieldNode;
  key: string;
  shape: Shape;
  fragments: Record<string, FragmentDefinitionNode>;
  /** Set once the root resolver answered a promise: execute instead. */
  off: boolean;
}

/** Plans by schema, document and operation name; null: this operation is executed. */
const plans = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string | null, Plan | null>>>();

/** The projector of this subscription (its variables and context bound), or null when it must be executed. */
export function projectorFor(args: ExecutionArgs): Projector | null {
  const { schema, document, contextValue } = args;
  const plan = planOf(schema, document, args.operationName ?? null);
  if (!plan || (args.fieldResolver && args.fieldResolver !== defaultFieldResolver)) return null;
  const variables = getVariableValues(schema, plan.operation.variableDefinitions ?? [], args.variableValues ?? {}, { maxErrors: 50 });
  if (variables.errors) return null;
  let argValues: Record<string, unknown>;
  try {
    argValues = getArgumentValues(plan.field, plan.node, variables.coerced);
  } catch {
    return null;
  }
  const resolve = plan.field.resolve ?? defaultFieldResolver;
  const { field, rootType, key, node, fragments, operation } = plan;
  const fieldNodes = [node];
  const path = { prev: undefined, key, typename: rootType.name };
  const variableValues = variables.coerced;
  return (payload) => {
    if (plan.off) return undefined;
    // graphql-js's info for the root field (a literal: spreading a shared one costs microseconds).
    const info: GraphQLResolveInfo = {
      fieldName: field.name,
      fieldNodes,
      returnType: field.type,
      parentType: rootType,
      path,
      schema,
      fragments,
      rootValue: payload,
      operation,
      variableValues,
    };
    let value: unknown;
    try {
      value = resolve(payload, argValues, contextValue, info);
    } catch {
      return undefined;
    }
    if (isPromiseLike(value)) {
      plan.off = true;
      return undefined;
    }
    const completed = complete(plan.shape, value);
    if (completed === FAIL) return undefined;
    const data = Object.create(null) as Record<string, unknown>;
    data[key] = completed;
    return { data };
  };
}

/** A value graphql-js would not complete without an error. */
const FAIL = Symbol('fail');

/** graphql-js's completeValue, for the shapes a plan holds; FAIL where graphql-js reports an error. */
function complete(shape: Shape, value: unknown): unknown {
  if (value instanceof Error) return FAIL;
  if (value === null || value === undefined) return shape.nonNull ? FAIL : null;
  if (shape.kind === 'leaf') {
    let serialized: unknown;
    try {
      serialized = shape.type.serialize(value);
    } catch {
      return FAIL;
    }
    return serialized === null || serialized === undefined ? FAIL : serialized;
  }
  const out = Object.create(null) as Record<string, unknown>;
  const source = typeof value === 'object' || typeof value === 'function' ? (value as Record<string, unknown>) : undefined;
  for (const field of shape.fields) {
    if (field.typename) {
      out[field.key] = field.value;
      continue;
    }
    // graphql-js's default resolver: the property, called if it is a function (executed then).
    const property = source?.[field.name];
    if (typeof property === 'function') return FAIL;
    const completed = complete(field.shape, property);
    if (completed === FAIL) return FAIL;
    out[field.key] = completed;
  }
  return out;
}

function planOf(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): Plan | null {
  let byDocument = plans.get(schema);
  if (!byDocument) plans.set(schema, (byDocument = new WeakMap()));
  let byName = byDocument.get(document);
  if (!byName) byDocument.set(document, (byName = new Map()));
  let plan = byName.get(operationName);
  if (plan === undefined) byName.set(operationName, (plan = compile(schema, document, operationName)));
  return plan;
}

function compile(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): Plan | null {
  if (validateSchema(schema).length > 0) return null;
  const operation = getOperationAST(document, operationName);
  const rootType = schema.getSubscriptionType();
  if (!operation || operation.operation !== 'subscription' || !rootType) return null;
  if (operation.directives?.length) return null;
  const [node, ...more] = operation.selectionSet.selections;
  if (!node || more.length > 0 || node.kind !== Kind.FIELD || node.directives?.length) return null;
  const field = rootType.getFields()[node.name.value];
  if (!field) return null;
  const shape = shapeOf(field.type, node.selectionSet);
  if (!shape) return null;
  const fragments: Record<string, FragmentDefinitionNode> = Object.create(null);
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  return { operation, rootType, field, node, key: node.alias?.value ?? node.name.value, shape, fragments, off: false };
}

/** The completion of `type` with `selectionSet`, or null when it is not plain (see Projector). */
function shapeOf(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined): Shape | null {
  const nonNull = isNonNullType(type);
  const nullable = getNullableType(type);
  if (isLeafType(nullable)) return selectionSet ? null : { kind: 'leaf', nonNull, type: nullable };
  // Lists, interfaces and unions are executed.
  if (!isObjectType(nullable) || !selectionSet || nullable.isTypeOf) return null;
  const fields: FieldPlan[] = [];
  const keys = new Set<string>();
  for (const selection of selectionSet.selections) {
    if (selection.kind !== Kind.FIELD || selection.directives?.length || selection.arguments?.length) return null;
    const key = selection.alias?.value ?? selection.name.value;
    if (keys.has(key)) return null;
    keys.add(key);
    if (selection.name.value === '__typename') {
      if (selection.selectionSet) return null;
      fields.push({ key, typename: true, value: nullable.name });
      continue;
    }
    const field = nullable.getFields()[selection.name.value];
    if (!field || field.args.length > 0 || (field.resolve && field.resolve !== defaultFieldResolver)) return null;
    const shape = shapeOf(field.type, selection.selectionSet);
    if (!shape) return null;
    fields.push({ key, name: field.name, typename: false, shape });
  }
  return { kind: 'object', nonNull, fields };
}
