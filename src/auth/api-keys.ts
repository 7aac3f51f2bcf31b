import { randomAlphanumeric } from '../lib/ids.js';
import { sha256Hex } from '../lib/crypto.js';
import type { Principal } from './principal.js';
import { BUS_RECONNECTED_TOPIC } from '../lib/pubsub.js';
import { setBounded } from '../lib/bounded-map.js';

export const API_KEY_PREFIX = 'gk_live_';

/** A fresh key: a recognisable prefix and 40 random alphanumerics (~238 bits). */
export function generateApiKey(): string {
  return `${API_KEY_PREFIX}${randomAlphanumeric(40)}`;
}

export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

/** Enough of a key to recognise it in a list without revealing it. */
export function displayPrefix(key: string): string {
  return key.slice(0, Math.min(key.length - 4, API_KEY_PREFIX.length + 4));
}

/**
 * The API key from the request headers, in the contract's order of precedence:
 * x-gateway-api-key, x-portkey-api-key, then Authorization: Bearer.
 */
export function apiKeyFromHeaders(headers: Headers): string | null {
  // An empty header does not hide the next one.
  for (const name of ['x-gateway-api-key', 'x-portkey-api-key']) {
    const value = headers.get(name)?.trim();
    if (value) return value;
  }
  const authorization = headers.get('authorization');
  const match = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  return match ? match[1] : null;
}

interface CacheEntry {
  principal: Principal | null;
  expiresAt: number;
}

/**
 * Keeps resolved keys in memory so that the steady state costs no database round trip per request.
 * A revocation takes effect at once in this process (the entry is dropped) and, when the pub/sub
 * crosses instances (PostgreSQL), in every other instance as soon as it hears of it (milliseconds;
 * the forget is published). Without that (SQLite: one server per file) another process sharing
 * the file, such as the CLI, is covered by the entry's expiry (API_KEY_CACHE_TTL_MS, default 5 s).
 * Unknown keys are cached too (as null), so a flood of bad keys does not become a flood of queries.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, CacheEntry>();
  private static readonly MAX_ENTRIES = 10_000;

  constructor(
    private readonly ttlMs: number,
    private readonly pubsub?: ForgetBus,
  ) {
    // The pub/sub delivers in this process too, so this one handler applies every forget, ours included.
    pubsub?.on(API_KEY_FORGOTTEN_TOPIC, (payload) => this.apply(payload as Forgotten));
    // Forgets sent while the bus was disconnected are lost: a revoked key could still be in here.
    pubsub?.on(BUS_RECONNECTED_TOPIC, () => this.forgetAll());
  }

  get(hash: string, now: number): Principal | null | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.principal;
  }

  /**
   * Counts forgets. A lookup notes it before reading the database and passes it to `set`: a key
   * forgotten while the read was under way (a revoke committing meanwhile, here or elsewhere) is
   * not cached from that read, which may predate the revoke.
   */
  generation = 0;

  set(hash: string, principal: Principal | null, now: number, generation = this.generation): void {
    if (this.ttlMs === 0 || generation !== this.generation) return;
    setBounded(this.entries, hash, { principal, expiresAt: now + this.ttlMs }, ApiKeyCache.MAX_ENTRIES);
  }

  /** Drops a key's entries here and, through the pub/sub, in every instance. */
  forgetKeyId(apiKeyId: string): void {
    this.forget({ keyId: apiKeyId });
  }

  forgetHash(hash: string): void {
    this.forget({ hash });
  }

  private forget(forgotten: Forgotten): void {
    if (this.pubsub) this.pubsub.publish(API_KEY_FORGOTTEN_TOPIC, forgotten);
    else this.apply(forgotten);
  }

  private forgetAll(): void {
    this.generation++;
    this.entries.clear();
  }

  private apply({ keyId, hash }: Forgotten): void {
    this.generation++;
    if (hash) this.entries.delete(hash);
    if (!keyId) return;
    for (const [key, entry] of this.entries) {
      if (entry.principal?.apiKeyId === keyId) this.entries.delete(key);
    }
  }
}

/** The topic on which forgotten keys travel between instances. */
export const API_KEY_FORGOTTEN_TOPIC = 'api-keys.forgotten';

interface Forgotten {
  keyId?: string;
  hash?: string;
}

/** What the cache needs of the pub/sub (src/lib/pubsub.ts). */
interface ForgetBus {
  publish(topic: string, payload: unknown): void;
  on(topic: string, handler: (payload: unknown) => void): unknown;
}
