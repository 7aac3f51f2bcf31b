/**
 * The instance bus (src/lib/pg-bus.ts): payload splitting and Date-keeping JSON always; with
 * TEST_DATABASE_URL, two buses on real connections: what one publishes the other hears, in order,
 * long payloads whole, its own never; one leader at a time, and the lock passes on when the
 * leader's connection closes.
 */
import { EventEmitter } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiKeyCache } from '../../../src/auth/api-keys.js';
import { configCache } from '../../../src/lib/config-cache.js';
import { createLogger } from '../../../src/lib/logger.js';
import { decode, encode, PgBus, splitForPayload, type RawPgClient } from '../../../src/lib/pg-bus.js';
import { BUS_RECONNECTED_TOPIC, PubSub } from '../../../src/lib/pubsub.js';
import { onPostgres, testDatabase, type TestDatabase } from '../../helpers/database.js';

describe('payloads', () => {
  it('splits text into pieces within the byte limit once JSON-escaped, never inside a character', () => {
    const text = 'a"é😀\\'.repeat(500);
    const pieces = splitForPayload(text, 100);
    expect(pieces.join('')).toBe(text);
    for (const piece of pieces) expect(Buffer.byteLength(JSON.stringify(piece)) - 2).toBeLessThanOrEqual(100);
    expect(pieces.some((p) => /[\uD800-\uDBFF]$/.test(p))).toBe(false);
    expect(splitForPayload('short', 100)).toEqual(['short']);
  });

  it('keeps Dates through JSON, and nothing else changes', () => {
    const value = { at: new Date('2026-01-02T03:04:05.678Z'), list: [1, 'x', null, { nested: new Date(0) }], s: '$date' };
    expect(decode(encode(value))).toEqual(value);
  });
});

describe('a lost connection', () => {
  /** A client that answers every statement and can be made to drop its connection. */
  function fakeClient(): RawPgClient & EventEmitter {
    return Object.assign(new EventEmitter(), { query: async () => ({ rows: [] }), end: async () => {} });
  }

  it('once listening again, tells this process that messages may have been missed, and the caches start afresh', async () => {
    const clients: Array<RawPgClient & EventEmitter> = [];
    const bus = new PgBus(async () => clients[clients.push(fakeClient()) - 1], createLogger('silent'));
    await bus.start();
    const pubsub = new PubSub(bus);
    const heard: unknown[] = [];
    pubsub.on(BUS_RECONNECTED_TOPIC, (payload) => heard.push(payload));
    const singletons = new Map<string, unknown>();
    const cache = configCache({ pubsub, singleton: <T>(key: string, create: () => T) => (singletons.get(key) ?? singletons.set(key, create()).get(key)) as T });
    let loads = 0;
    const load = async () => ++loads;
    await cache.get('providers', 'p', load);
    const keys = new ApiKeyCache(60_000, pubsub);
    keys.set('hash', null, 0);
    const generation = keys.generation;

    clients[0].emit('end');
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(clients).toHaveLength(2);
    expect(heard).toEqual([null]);
    expect(await cache.get('providers', 'p', load)).toBe(2);
    expect(keys.get('hash', 1)).toBeUndefined();
    expect(keys.generation).toBeGreaterThan(generation);
    await bus.close();
  });
});

describe.skipIf(!onPostgres)('two buses on one PostgreSQL database', () => {
  const logger = createLogger('silent');
  const opened: PgBus[] = [];
  let database: TestDatabase;

  async function client(): Promise<RawPgClient> {
    database ??= await testDatabase('sqlite::memory:');
    // pg is the driver @mikro-orm/postgresql brings; the app gets its client through the ORM's knex.
    const { default: pg } = (await import('pg' as string)) as { default: { Client: new (options: { connectionString: string }) => RawPgClient & { connect(): Promise<void> } } };
    const created = new pg.Client({ connectionString: database.url });
    await created.connect();
    return created;
  }

  async function bus(): Promise<PgBus> {
    const created = new PgBus(client, logger);
    await created.start();
    opened.push(created);
    return created;
  }

  afterAll(async () => {
    for (const b of opened) await b.close();
    await database?.release();
  });

  it('delivers to the other instance in order, long payloads whole, and not back to the sender', async () => {
    const [a, b] = [await bus(), await bus()];
    const [pa, pb] = [new PubSub(a), new PubSub(b)];
    const heardByA: unknown[] = [];
    const heardByB: unknown[] = [];
    pa.on('t', (p) => heardByA.push(p));
    pb.on('t', (p) => heardByB.push(p));
    const long = 'x"é'.repeat(6000);
    const sent = [...Array.from({ length: 50 }, (_, i) => ({ i })), { i: 50, long, at: new Date(5) }, { i: 51 }];
    for (const payload of sent) pa.publish('t', payload);
    const until = Date.now() + 5_000;
    while (heardByB.length < sent.length && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(heardByB).toEqual(sent);
    // A heard its own in process only (by reference), never a second time through the database.
    expect(heardByA).toHaveLength(sent.length);
    expect(heardByA.every((p, i) => p === sent[i])).toBe(true);
  });

  it('one leader at a time; when its connection closes another instance takes over', async () => {
    const [a, b] = [await bus(), await bus()];
    // A bus of the previous test may hold the lock: close them all but these two first.
    for (const other of opened.filter((o) => o !== a && o !== b)) await other.close();
    const first = await a.leads();
    expect(await b.leads()).toBe(!first);
    const leader = first ? a : b;
    const follower = first ? b : a;
    expect(await leader.leads()).toBe(true);
    await leader.close();
    expect(await follower.leads()).toBe(true);
  });

  it('a bus whose connection is cut reconnects and hears again', async () => {
    const [a, b] = [await bus(), await bus()];
    const heard: unknown[] = [];
    new PubSub(b).on('r', (p) => heard.push(p));
    const killer = await client();
    await killer.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    await killer.end();
    const pa = new PubSub(a);
    const until = Date.now() + 10_000;
    // Messages sent while b is away are lost (run followers read the log); keep sending until b is back.
    for (let i = 0; heard.length === 0 && Date.now() < until; i++) {
      pa.publish('r', { i });
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(heard.length).toBeGreaterThan(0);
  });
});
