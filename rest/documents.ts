import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Kind,
  parse,
  validate,
  visit,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';

export interface Operation {
  name: string;
  kind: 'query' | 'mutation' | 'subscription';
  document: DocumentNode;
}

const OPERATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'operations');

// Per schema and directory: every app of a process (tests build many) shares the parsed and
// validated documents, which are never changed after loading.
const loaded = new WeakMap<GraphQLSchema, Map<string, ReadonlyMap<string, Operation>>>();

/**
 * Reads every `rest/operations/*.graphql` file once, splits it into one document per named
 * operation (with the fragments that operation uses), and validates each against the schema, so
 * a REST request never parses or validates anything.
 */
export function loadOperations(schema: GraphQLSchema, dir = OPERATIONS_DIR): ReadonlyMap<string, Operation> {
  let byDir = loaded.get(schema);
  if (!byDir) loaded.set(schema, (byDir = new Map()));
  let operations = byDir.get(dir);
  if (!operations) byDir.set(dir, (operations = readOperations(schema, dir)));
  return operations;
}

function readOperations(schema: GraphQLSchema, dir: string): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  const problems: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.graphql')).sort()) {
    const source = parse(readFileSync(join(dir, file), 'utf8'));
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of source.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    for (const def of source.definitions) {
      if (def.kind !== Kind.OPERATION_DEFINITION) continue;
      if (!def.name) {
        problems.push(`${file}: every operation needs a name`);
        continue;
      }
      const name = def.name.value;
      if (operations.has(name)) problems.push(`${file}: operation ${name} is defined twice`);
      const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: [def, ...usedFragments(def, fragments)] };
      for (const error of validate(schema, document)) problems.push(`${file} ${name}: ${error.message}`);
      operations.set(name, { name, kind: def.operation, document });
    }
  }
  if (problems.length) throw new Error(`REST operations do not match the schema:\n${problems.join('\n')}`);
  return operations;
}

function usedFragments(
  root: OperationDefinitionNode | FragmentDefinitionNode,
  fragments: Map<string, FragmentDefinitionNode>,
  seen = new Set<string>(),
): FragmentDefinitionNode[] {
  const out: FragmentDefinitionNode[] = [];
  visit(root, {
    FragmentSpread(node) {
      const name = node.name.value;
      if (seen.has(name)) return;
      seen.add(name);
      const fragment = fragments.get(name);
      if (fragment) out.push(fragment, ...usedFragments(fragment, fragments, seen));
    },
  });
  return out;
}
