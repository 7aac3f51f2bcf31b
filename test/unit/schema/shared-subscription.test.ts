/**
 * schema/shared-subscription.ts: subscribers of a `sharedResults` source with the same selection
 * get one execution per payload, the same result object each (whatever the root field's own
 * arguments), whether they parsed the same text or share a document built without one;
 * another selection is executed for itself; a source that is not marked shared is
 * executed per subscriber, as graphql-js does.
 */
import { GraphQLInt, GraphQLObjectType, GraphQLSchema, Kind, parse, type DocumentNode, type ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import { sharedResults, subscribeShared } from '../../../schema/shared-subscription.js';
import { iterateFeed, type Feed, type FeedSink } from '../../../src/lib/feed.js';

type Payload = { n: number };

/** A publisher: every subscription's feed gets each published payload, by reference. */
function publisher() {
  const sinks = new Set<FeedSink<Payload>>();
  const feed = (): Feed<Payload> => {
    let mine: FeedSink<Payload>;
    const f: Feed<Payload> = {
      start: (sink) => sinks.add((mine = sink)),
      resume: () => {},
      stop: () => sinks.delete(mine),
      [Symbol.asyncIterator]: () => iterateFeed(f),
    };
    return f;
  };
  return { feed, publish: (payload: Payload) => sinks.forEach((sink) => sink.push(payload)) };
}

function schemaWith(source: () => AsyncIterable<Payload>) {
  const counts = { resolved: 0 };
  const Event = new GraphQLObjectType({
    name: 'Event',
    fields: {
      n: { type: GraphQLInt, resolve: (p: Payload) => (counts.resolved++, p.n) },
      double: { type: GraphQLInt, resolve: (p: Payload) => p.n * 2 },
    },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { x: { type: GraphQLInt } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: { events: { type: Event, args: { after: { type: GraphQLInt } }, subscribe: source, resolve: (p: Payload) => p } },
    }),
  });
  return { schema, counts };
}

/** Subscribes and collects what a sink receives. */
async function follow(schema: GraphQLSchema, query: string, variableValues: Record<string, unknown> = {}) {
  const received: ExecutionResult[] = [];
  const results = (await subscribeShared({ schema, document: parse(query), variableValues, contextValue: {} })) as Feed<ExecutionResult>;
  results.start({ push: (r) => (received.push(r), true), end: () => {}, fail: (e) => { throw e; } });
  return received;
}

describe('subscribeShared', () => {
  it('one execution per payload and selection, one result object for all its subscribers', async () => {
    const pub = publisher();
    const { schema, counts } = schemaWith(() => sharedResults(pub.feed()));
    const query = 'subscription($a: Int) { events(after: $a) { n } }';
    const a = await follow(schema, query, { a: 1 });
    const b = await follow(schema, query, { a: 2 });
    const other = await follow(schema, 'subscription { events { n double } }');
    pub.publish({ n: 7 });
    pub.publish({ n: 8 });
    expect(a.map((r) => r.data)).toEqual([{ events: { n: 7 } }, { events: { n: 8 } }]);
    expect(b[0]).toBe(a[0]);
    expect(b[1]).toBe(a[1]);
    expect(other.map((r) => r.data)).toEqual([{ events: { n: 7, double: 14 } }, { events: { n: 8, double: 16 } }]);
    // Two selections, two payloads.
    expect(counts.resolved).toBe(4);
  });

  it('a subscriber handed a payload after another selection\'s subscriber still gets the result made for its own selection', async () => {
    const pub = publisher();
    const { schema, counts } = schemaWith(() => sharedResults(pub.feed()));
    const query = 'subscription { events { n } }';
    const a = await follow(schema, query);
    const other = await follow(schema, 'subscription { events { double } }');
    const b = await follow(schema, query);
    // Each payload reaches a, then other (another selection), then b: b's result is a's, not the last one handed out.
    pub.publish({ n: 5 });
    pub.publish({ n: 6 });
    expect(b.map((r) => r.data)).toEqual([{ events: { n: 5 } }, { events: { n: 6 } }]);
    expect(b[0]).toBe(a[0]);
    expect(b[1]).toBe(a[1]);
    expect(other.map((r) => r.data)).toEqual([{ events: { double: 10 } }, { events: { double: 12 } }]);
    expect(counts.resolved).toBe(2);
  });

  it('a document without source text (a REST operation, built from parsed definitions) is shared by its subscribers', async () => {
    const pub = publisher();
    const { schema, counts } = schemaWith(() => sharedResults(pub.feed()));
    const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: parse('subscription { events { n } }').definitions };
    const subscribe = async () => {
      const received: ExecutionResult[] = [];
      const results = (await subscribeShared({ schema, document, contextValue: {} })) as Feed<ExecutionResult>;
      results.start({ push: (r) => (received.push(r), true), end: () => {}, fail: (e) => { throw e; } });
      return received;
    };
    const [a, b] = [await subscribe(), await subscribe()];
    const other = await follow(schema, 'subscription { events { double } }');
    pub.publish({ n: 3 });
    expect(a).toEqual([{ data: { events: { n: 3 } } }]);
    expect(b[0]).toBe(a[0]);
    expect(other).toEqual([{ data: { events: { double: 6 } } }]);
    expect(counts.resolved).toBe(1);
  });

  it('subscribers of one document stay shared after a thousand other selections have come and gone', async () => {
    const pub = publisher();
    const { schema, counts } = schemaWith(() => sharedResults(pub.feed()));
    const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: parse('subscription { events { n } }').definitions };
    const subscribe = async (doc: DocumentNode) => {
      const received: ExecutionResult[] = [];
      const results = (await subscribeShared({ schema, document: doc, contextValue: {} })) as Feed<ExecutionResult>;
      results.start({ push: (r) => (received.push(r), true), end: () => {}, fail: (e) => { throw e; } });
      return { received, stop: () => results.stop() };
    };
    const early = await subscribe(document);
    for (let i = 0; i < 1_000; i++) (await subscribe(parse(`subscription Op${i} { events { n } }`))).stop();
    const late = await subscribe(document);
    pub.publish({ n: 4 });
    expect(late.received[0]).toBe(early.received[0]);
    expect(counts.resolved).toBe(1);
  });

  it('a source that is not marked shared is executed per subscriber', async () => {
    const { schema, counts } = schemaWith(async function* () {
      yield { n: 1 };
    });
    const results = await Promise.all(
      [1, 2].map(async () => {
        const iterable = (await subscribeShared({ schema, document: parse('subscription { events { n } }'), contextValue: {} })) as AsyncIterable<ExecutionResult>;
        const all: ExecutionResult[] = [];
        for await (const result of iterable) all.push(result);
        return all;
      }),
    );
    expect(results.map((all) => all.map((r) => r.data))).toEqual([[{ events: { n: 1 } }], [{ events: { n: 1 } }]]);
    expect(results[0][0]).not.toBe(results[1][0]);
    expect(counts.resolved).toBe(2);
  });
});
