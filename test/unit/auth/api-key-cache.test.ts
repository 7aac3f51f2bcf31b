/**
 * The API key cache: a forget on one instance reaches the others through the pub/sub (here two
 * PubSubs joined by an in-memory bus standing in for PostgreSQL's), and a lookup that a forget
 * overtook is not cached (its read may predate the revoke).
 */
import { expect, it } from 'vitest';
import { ApiKeyCache } from '../../../src/auth/api-keys.js';
import type { Principal } from '../../../src/auth/principal.js';
import { PubSub, type Bus } from '../../../src/lib/pubsub.js';

/** Two buses: what one sends, the other hands to its handlers (never back to the sender). */
function joinedBuses(): [Bus, Bus] {
  const handlers: ((topic: string, payload: unknown) => void)[][] = [[], []];
  const bus = (me: number): Bus => ({
    send: (topic, payload) => handlers[1 - me].forEach((h) => h(topic, structuredClone(payload))),
    onMessage: (handler) => void handlers[me].push(handler),
  });
  return [bus(0), bus(1)];
}

const principal: Principal = { apiKeyId: 'key-1', organisationId: 'org', type: 'organisation', workspaceId: null };

it('a key forgotten on one instance is dropped by the other', () => {
  const [busA, busB] = joinedBuses();
  const a = new ApiKeyCache(60_000, new PubSub(busA));
  const b = new ApiKeyCache(60_000, new PubSub(busB));
  a.set('h1', principal, 0);
  b.set('h1', principal, 0);
  b.set('h2', { ...principal, apiKeyId: 'key-2' }, 0);
  a.forgetKeyId('key-1');
  expect(a.get('h1', 1)).toBeUndefined();
  expect(b.get('h1', 1)).toBeUndefined();
  expect(b.get('h2', 1)).toEqual({ ...principal, apiKeyId: 'key-2' });
  b.forgetHash('h2');
  expect(b.get('h2', 1)).toBeUndefined();
});

it('a lookup overtaken by a forget (here or on another instance) is not cached', () => {
  const [busA, busB] = joinedBuses();
  const a = new ApiKeyCache(60_000, new PubSub(busA));
  const b = new ApiKeyCache(60_000, new PubSub(busB));
  const noted = b.generation;
  a.forgetKeyId('key-1');
  b.set('h1', principal, 0, noted);
  expect(b.get('h1', 1)).toBeUndefined();
  b.set('h1', principal, 0, b.generation);
  expect(b.get('h1', 1)).toEqual(principal);
});
