import {
  createSourceEventStream,
  execute,
  getOperationAST,
  Kind,
  visit,
  type ASTNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { setBounded } from '../src/lib/bounded-map.js';
import { isAsyncIterable, isFeed, mapFeed, type Feed } from '../src/lib/feed.js';
import { projectorFor, type Projector } from './subscription-projector.js';

/**
 * Subscriptions followed by many clients at once (1,000 on one run's events): graphql-js executes
 * the selection once per event per subscriber, which for a thousand subscribers costs more than
 * everything else together. A source marked with `sharedResults` promises that the selection
 * under its root field resolves from the payload alone (not the context, not the root field's
 * arguments): each payload is then executed once per selection, and every subscriber of that
 * selection receives the same ExecutionResult object, so transports can serialise it once too.
 *
 * A result with errors is never shared: each subscriber's errors are masked with its own
 * request id.
 */
const shared = new WeakSet<object>();

/** Marks `feed`'s payloads as shared snapshots whose selection resolves from the payload alone. */
export function sharedResults<T>(feed: Feed<T>): Feed<T> {
  shared.add(feed);
  return feed;
}

/** Results by payload, then by selection key. Payloads are published snapshots, held weakly. */
const results = new WeakMap<object, Map<string, ExecutionResult>>();

/** The shared result feed of the last shared subscription made with this context (see sharedFeedOf). */
const feedsByContext = new WeakMap<object, Feed<ExecutionResult>>();

/**
 * graphql-js's `subscribe`, except that a `sharedResults` source yields a feed of shared results
 * (see above). Any other source is executed per payload, as graphql-js does.
 */
export async function subscribeShared(args: ExecutionArgs): Promise<ExecutionResult | AsyncIterable<ExecutionResult>> {
  const source = await createSourceEventStream(args);
  if (!isAsyncIterable(source)) return source;
  const project = projectorFor(args);
  if (!(isFeed(source) && shared.has(source))) return perSubscriber(source, args, project);
  const key = selectionKey(args);
  const feed = mapFeed(source, (payload) => sharedResult(args, project, key, payload));
  if (typeof args.contextValue === 'object' && args.contextValue !== null) feedsByContext.set(args.contextValue, feed);
  return feed;
}

/**
 * The shared feed that `subscribeShared` made with `context`, if any. Envelop's plugins wrap a
 * subscription's results in an iterator of their own (masking); a transport that writes the
 * shared results itself takes the feed here instead (it then masks errors itself).
 */
export function sharedFeedOf(context: object): Feed<ExecutionResult> | undefined {
  const feed = feedsByContext.get(context);
  feedsByContext.delete(context);
  return feed;
}

/** Makes Yoga's (envelop's) subscriptions go through `subscribeShared`. */
export function sharedSubscriptionPlugin(): Plugin {
  return {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(subscribeShared as never);
    },
  };
}

/** The last shared result handed out: a payload's subscribers take it one after another. */
let last: { payload: object; key: string; result: ExecutionResult } | undefined;

function sharedResult(args: ExecutionArgs, project: Projector | null, key: string, payload: unknown): ExecutionResult {
  if (typeof payload !== 'object' || payload === null) return executeSync(args, project, payload);
  if (last?.payload === payload && last.key === key) return last.result;
  const result = resultOf(args, project, key, payload);
  if (!result.errors?.length) last = { payload, key, result };
  return result;
}

function resultOf(args: ExecutionArgs, project: Projector | null, key: string, payload: object): ExecutionResult {
  let byKey = results.get(payload);
  const known = byKey?.get(key);
  if (known) return known;
  const result = executeSync(args, project, payload);
  if (result.errors?.length) return result;
  if (!byKey) results.set(payload, (byKey = new Map()));
  byKey.set(key, result);
  return result;
}

/** The payload's result: projected when the selection allows it (see subscription-projector.ts), else executed. */
function executeSync(args: ExecutionArgs, project: Projector | null, payload: unknown): ExecutionResult {
  const projected = project?.(payload);
  if (projected) return projected;
  const result = execute({ ...args, rootValue: payload });
  // A shared source's selection resolves from the payload alone, hence synchronously.
  if ('then' in result) throw new Error('A shared subscription resolved its selection asynchronously.');
  return result;
}

/**
 * What the execution of one payload depends on besides the payload: the document, the operation
 * and the variables the selection under the root field uses (the root field's own arguments only
 * chose the source). Variables are over-counted (any fragment's), which only shares less.
 */
function selectionKey(args: ExecutionArgs): string {
  const { document, operationName, variableValues } = args;
  const used = selectionVariables(document, operationName).map((name) => [name, variableValues?.[name] ?? null]);
  return JSON.stringify([documentId(document), operationName ?? null, used]);
}

/** The variables a selection uses, sorted, by document and operation: a REST operation's document is walked once, not per stream. */
const variablesByDocument = new WeakMap<DocumentNode, Map<string | null, string[]>>();

function selectionVariables(document: DocumentNode, operationName: string | null | undefined): string[] {
  let byOperation = variablesByDocument.get(document);
  const known = byOperation?.get(operationName ?? null);
  if (known) return known;
  const operation = getOperationAST(document, operationName);
  const names = new Set<string>();
  const collect = (node: ASTNode) =>
    visit(node, {
      Variable(variable) {
        names.add(variable.name.value);
      },
    });
  for (const selection of operation?.selectionSet.selections ?? []) {
    if (selection.kind !== Kind.FIELD) collect(selection);
    else {
      for (const directive of selection.directives ?? []) collect(directive);
      if (selection.selectionSet) collect(selection.selectionSet);
    }
  }
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) collect(definition);
  const sorted = [...names].sort();
  if (!byOperation) variablesByDocument.set(document, (byOperation = new Map()));
  byOperation.set(operationName ?? null, sorted);
  return sorted;
}

/**
 * A number standing for a document in selection keys: one per source text (documents parsed
 * from the same text share it), else one per document object (a REST operation's, built once).
 * The key is compared for each payload of each subscriber: with the text in it (a REST
 * operation's was its whole AST as JSON, kilobytes) the comparison cost more than the rest of
 * the delivery. A text forgotten past TEXT_IDS gets a new number: its subscribers share less.
 */
const documentIds = new WeakMap<DocumentNode, number>();
const textIds = new Map<string, number>();
const TEXT_IDS = 1000;
let documentCount = 0;

function documentId(document: DocumentNode): number {
  let id = documentIds.get(document);
  if (id !== undefined) return id;
  const text = document.loc?.source.body;
  id = text === undefined ? undefined : textIds.get(text);
  if (id === undefined) {
    id = ++documentCount;
    if (text !== undefined) setBounded(textIds, text, id, TEXT_IDS);
  }
  documentIds.set(document, id);
  return id;
}

/**
 * graphql-js's mapping of source events to results (projected when the selection allows it);
 * `return()` reaches the source at once.
 */
function perSubscriber(source: AsyncIterable<unknown>, args: ExecutionArgs, project: Projector | null): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  const mapped: AsyncIterableIterator<ExecutionResult> = {
    async next() {
      const next = await iterator.next();
      if (next.done) return next;
      return { value: project?.(next.value) ?? (await execute({ ...args, rootValue: next.value })), done: false };
    },
    async return() {
      await iterator.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => mapped,
  };
  return mapped;
}
