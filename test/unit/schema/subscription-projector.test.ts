/**
 * schema/subscription-projector.ts: on the real schema, for every subscription document the REST
 * rows, the tests and the benches use, a projected result is graphql-js's own (same data, same
 * key order, same objects without prototype, scalars serialised as graphql-js does), and where
 * graphql-js reports an error (null for a non-null type, a value that does not serialise) or
 * would call something (a property that is a function, a field resolver, a fragment, a
 * directive) the projector stands aside and the subscription's result is graphql-js's, errors
 * included.
 */
import { execute, GraphQLError, GraphQLObjectType, GraphQLSchema, parse, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../../schema/index.js';
import { sharedResults, subscribeShared } from '../../../schema/shared-subscription.js';
import { projectorFor } from '../../../schema/subscription-projector.js';
import { iterateFeed, type Feed, type FeedSink } from '../../../src/lib/feed.js';
import { loadOperations } from '../../../rest/documents.js';

const operations = loadOperations(schema);
const rest = [...operations.values()].filter((operation) => operation.kind === 'subscription');

/** Subscription documents of the tests and benches (test/schema, test/e2e, bench/fanout.ts). */
const RUN_EVENTS = [
  'subscription($t: String!, $r: String!) { runEvents(threadId: $t, runId: $r) { sequence event data } }',
  'subscription($t: String!, $r: String!) { runEvents(threadId: $t, runId: $r, after: 1) { sequence event } }',
  'subscription($t: String!, $r: String!) { runEvents(threadId: $t, runId: $r, endAtRequiresAction: true) { event } }',
  'subscription($t: String!, $r: String!) { runEvents(threadId: $t, runId: $r) { event } }',
  'subscription($t: String!, $r: String!, $after: Int) { runEvents(threadId: $t, runId: $r, after: $after) { sequence event } }',
  // What clients add: aliases and __typename.
  'subscription { e: runEvents(threadId: "t", runId: "r") { __typename seq: sequence data event } }',
];
const CHAT = ['subscription($id: String!) { chatCompletionChunks(streamId: $id) }', 'subscription($id: String!) { chunk: chatCompletionChunks(streamId: $id) }'];
const VARIABLES = { t: 'thread_1', r: 'run_1', after: 2, id: 'chatcmpl_1', streamId: 'chatcmpl_1', threadId: 'thread_1', runId: 'run_1' };

const delta = { id: 'msg_1', object: 'thread.message.delta', delta: { content: [{ index: 0, type: 'text', text: { value: 'hé' } }] } };
/** Run events graphql-js answers without errors. */
const RUN_PAYLOADS: unknown[] = [
  { sequence: 3, event: 'thread.message.delta', data: delta },
  { sequence: 1, event: 'thread.run.created', data: { id: 'run_1', status: 'queued', metadata: {}, usage: null } },
  // JSON is serialised as it is, falsy values included; extra properties are not read.
  { sequence: 2, event: 'x', data: 0, extra: 'ignored' },
  { sequence: 2, event: 'x', data: false },
  { sequence: 2, event: 'x', data: '' },
  { sequence: 2, event: 'x', data: [1, null, { a: undefined }] },
  // Int and String serialise what graphql-js's scalars accept.
  { sequence: '7', event: 12, data: {} },
  { sequence: 4.0, event: true, data: {} },
  { sequence: -5, event: 'e', data: new Date(0) },
  Object.assign(Object.create({ inherited: true }), { sequence: 9, event: 'proto', data: 1 }),
];
/** Run events graphql-js answers with errors, or by calling a function: the projector stands aside. */
const RUN_ERRORS: unknown[] = [
  { sequence: 3, event: 'e', data: null },
  { sequence: 3, event: 'e' },
  { sequence: null, event: 'e', data: 1 },
  { sequence: 1.5, event: 'e', data: 1 },
  { sequence: 2 ** 31, event: 'e', data: 1 },
  { sequence: 'seven', event: 'e', data: 1 },
  { sequence: 3, event: { not: 'a string' }, data: 1 },
  { sequence: 3, event: null, data: 1 },
  { sequence: 3, event: 'e', data: new Error('an error value') },
  null,
  undefined,
  new Error('the payload is an error'),
  'a string payload',
];
const CHAT_PAYLOADS: unknown[] = [
  { id: 'chatcmpl_1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] },
  { id: 'chatcmpl_1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 3, completion_tokens: 5 } },
  0,
  'text',
];
const CHAT_ERRORS: unknown[] = [null, undefined, new Error('chunk error')];

function argsOf(document: DocumentNode, operationName?: string): ExecutionArgs {
  return { schema, document, operationName, variableValues: VARIABLES, contextValue: {} };
}

/** graphql-js's result for one payload, as execute gives it for a subscription's event. */
function executed(args: ExecutionArgs, payload: unknown): ExecutionResult {
  const result = execute({ ...args, rootValue: payload });
  if ('then' in result) throw new Error('executed asynchronously');
  return result;
}

/** The same values, keys in the same order, objects with the same prototype (graphql-js makes them without one). */
function expectIdentical(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected !== 'object' || expected === null || expected instanceof GraphQLError) {
    expect(actual, path).toStrictEqual(expected);
    return;
  }
  expect(typeof actual, path).toBe('object');
  expect(Object.getPrototypeOf(actual), `${path} prototype`).toBe(Object.getPrototypeOf(expected));
  expect(Array.isArray(actual), path).toBe(Array.isArray(expected));
  expect(Object.keys(actual as object), `${path} keys`).toEqual(Object.keys(expected));
  for (const key of Object.keys(expected)) expectIdentical((actual as Record<string, unknown>)[key], (expected as Record<string, unknown>)[key], `${path}.${key}`);
}

const cases = [
  ...rest.map((operation) => ({ name: `REST ${operation.name}`, args: argsOf(operation.document, operation.name) })),
  ...[...RUN_EVENTS, ...CHAT].map((query) => ({ name: query, args: argsOf(parse(query)) })),
];

describe('subscription projector', () => {
  it('covers the REST rows’ subscriptions (run events and chat chunks)', () => {
    expect(rest.map((operation) => operation.name).sort()).toEqual(['RestChatCompletionChunks', 'RestRunEvents']);
  });

  it.each(cases)('$name: projected as graphql-js executes it, and stands aside where graphql-js errs', ({ name, args }) => {
    const project = projectorFor(args);
    expect(project, 'plain selection: a projector').not.toBeNull();
    const chat = name.includes('hatCompletionChunks');
    let errs = 0;
    for (const payload of chat ? [...CHAT_PAYLOADS, ...CHAT_ERRORS] : [...RUN_PAYLOADS, ...RUN_ERRORS]) {
      const expected = executed(args, payload);
      const projected = project!(payload);
      if (expected.errors) {
        errs++;
        expect(projected, `graphql-js errs on ${String(JSON.stringify(payload))}: stood aside`).toBeUndefined();
        continue;
      }
      expect(projected, `projected ${String(JSON.stringify(payload))}`).toBeDefined();
      expectIdentical(projected, expected);
    }
    // The valid payloads never err; a selection of every field errs on each of the others.
    const selectsAll = chat || name === 'REST RestRunEvents' || name === RUN_EVENTS[0];
    if (selectsAll) expect(errs).toBe(chat ? CHAT_ERRORS.length : RUN_ERRORS.length);
    else expect(errs).toBeLessThanOrEqual(RUN_ERRORS.length);
  });

  it('a property that is a function is called by graphql-js: the projector stands aside', () => {
    const args = argsOf(parse(RUN_EVENTS[0]));
    const payload = { sequence: () => 5, event: 'e', data: 1 };
    expect(executed(args, payload)).toEqual({ data: { runEvents: { sequence: 5, event: 'e', data: 1 } } });
    expect(projectorFor(args)!(payload)).toBeUndefined();
  });

  it.each([
    ['a fragment', 'subscription { runEvents(threadId: "t", runId: "r") { ...E } } fragment E on RunEvent { sequence event }'],
    ['an inline fragment', 'subscription { runEvents(threadId: "t", runId: "r") { ... on RunEvent { sequence } } }'],
    ['a directive', 'subscription($s: Boolean!) { runEvents(threadId: "t", runId: "r") { sequence @include(if: $s) event } }'],
    ['a directive on the root field', 'subscription { runEvents(threadId: "t", runId: "r") @skip(if: false) { sequence } }'],
    ['a response key twice', 'subscription { runEvents(threadId: "t", runId: "r") { sequence sequence } }'],
    ['a field with its own resolver', 'subscription { workspaceEvents { type workspace { slug } } }'],
    ['an enum field with a resolver', 'subscription { usageAlerts { kind ownerId } }'],
    ['a query', 'query { __typename }'],
  ])('%s: not projected', (_name, query) => {
    expect(projectorFor({ ...argsOf(parse(query)), variableValues: { s: true } })).toBeNull();
  });

  it('other subscriptions with plain selections project as graphql-js executes them (DateTime, Float, ID)', () => {
    const args = argsOf(parse('subscription { usageAlerts { id ownerId label currentUsage creditLimit alertThreshold workspaceId createdAt } }'));
    const project = projectorFor(args)!;
    expect(project).not.toBeNull();
    const alert = { id: 42, ownerId: 'p', label: 'L', currentUsage: 3, creditLimit: 10, alertThreshold: null, workspaceId: null, createdAt: new Date('2026-11-24T10:00:00Z') };
    expectIdentical(project(alert), executed(args, alert));
    expect(executed(args, { ...alert, createdAt: 'not a date' }).errors?.length).toBe(1);
    expect(project({ ...alert, createdAt: 'not a date' })).toBeUndefined();
  });

  it('through subscribeShared, shared or not: a payload the projector stands aside for gets graphql-js’s result, errors included', async () => {
    const args = argsOf(parse(RUN_EVENTS[0]));
    const payloads = [RUN_PAYLOADS[0], { sequence: 1.5, event: 'e', data: 1 }, { sequence: () => 5, event: 'e', data: 1 }];
    // The shared path (a run's follower is a feed marked sharedResults).
    const sinks = new Set<FeedSink<unknown>>();
    const feed: Feed<unknown> = {
      start: (sink) => sinks.add(sink),
      resume: () => {},
      stop: () => sinks.clear(),
      [Symbol.asyncIterator]: () => iterateFeed(feed),
    };
    const sharedSchema = withSource(() => sharedResults(feed));
    const received: ExecutionResult[] = [];
    const results = (await subscribeShared({ ...args, schema: sharedSchema })) as Feed<ExecutionResult>;
    results.start({ push: (r) => (received.push(r), true), end: () => {}, fail: (e) => { throw e; } });
    for (const payload of payloads) sinks.forEach((sink) => sink.push(payload));
    expect(received.map((r) => JSON.stringify(r))).toEqual(payloads.map((p) => JSON.stringify(executed({ ...args, schema: sharedSchema }, p))));
    expect(received[1].errors?.[0].message).toBe('Int cannot represent non-integer value: 1.5');
    // The per-subscriber path (an async iterable, as a chat stream's chunks).
    const plainSchema = withSource(async function* () {
      yield* payloads;
    });
    const iterated: ExecutionResult[] = [];
    for await (const result of (await subscribeShared({ ...args, schema: plainSchema })) as AsyncIterable<ExecutionResult>) iterated.push(result);
    expect(iterated.map((r) => JSON.stringify(r))).toEqual(received.map((r) => JSON.stringify(r)));
  });
});

/** The real schema's types and resolvers, with runEvents subscribing to `source`. */
function withSource(source: () => AsyncIterable<unknown>): GraphQLSchema {
  const config = schema.toConfig();
  const subscription = schema.getSubscriptionType()!.toConfig();
  return new GraphQLSchema({
    ...config,
    types: config.types.filter((type) => type.name !== subscription.name),
    subscription: new GraphQLObjectType({ ...subscription, fields: { ...subscription.fields, runEvents: { ...subscription.fields.runEvents, subscribe: source } } }),
  });
}
