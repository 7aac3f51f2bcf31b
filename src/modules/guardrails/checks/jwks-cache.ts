import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { systemClock, type Clock } from '../../../lib/clock.js';

export interface JwksCacheOptions {
  clock?: Clock;
  /** Whole request, body included. */
  fetchTimeoutMs?: number;
  /** A kid miss refetches only if the keys in hand are at least this old (jose's default too). */
  refreshCooldownMs?: number;
  /** After a failed fetch, callers get the same error for this long instead of hammering a down server. */
  failureBackoffMs?: number;
  maxBytes?: number;
}

export interface JwksEntry {
  readonly jwks: JSONWebKeySet;
  /** jose key resolver over this key set (matches kid, kty and alg). */
  readonly getKey: ReturnType<typeof createLocalJWKSet>;
  readonly fetchedAt: number;
}

interface Slot {
  entry?: JwksEntry;
  inflight?: Promise<JwksEntry>;
  failure?: { error: Error; at: number };
}

/**
 * JWKS documents by URI, owned by the caller (one per app instance, so tests and tenants of a
 * process never share state). Single-flight: concurrent callers share one in-flight fetch, so a
 * cache period costs exactly one request however many evaluations arrive together. Expired or
 * failed key sets are never used: verification fails closed while the JWKS is unreachable.
 */
export class JwksCache {
  private readonly slots = new Map<string, Slot>();
  private readonly clock: Clock;
  private readonly fetchTimeoutMs: number;
  private readonly refreshCooldownMs: number;
  private readonly failureBackoffMs: number;
  private readonly maxBytes: number;
  /** HTTP fetches started (for metrics and tests). */
  fetches = 0;

  constructor(opts: JwksCacheOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.fetchTimeoutMs = opts.fetchTimeoutMs ?? 3000;
    this.refreshCooldownMs = opts.refreshCooldownMs ?? 30_000;
    this.failureBackoffMs = opts.failureBackoffMs ?? 1000;
    this.maxBytes = opts.maxBytes ?? 512 * 1024;
  }

  /** The key set at `uri`, fetched if absent or older than `maxAgeSeconds`. Rejects when unreachable. */
  get(uri: string, maxAgeSeconds: number): Promise<JwksEntry> {
    const slot = this.slot(uri);
    const now = this.now();
    if (slot.entry && now - slot.entry.fetchedAt < maxAgeSeconds * 1000) return Promise.resolve(slot.entry);
    if (slot.inflight) return slot.inflight;
    if (slot.failure && now - slot.failure.at < this.failureBackoffMs) return Promise.reject(slot.failure.error);
    return this.start(uri, slot);
  }

  /**
   * A token named a key that `seen` lacks (rotation). Refetch at most once per cooldown per URI;
   * undefined means "rate-limited, nothing newer". Rejects when the refetch fails.
   */
  refreshAfterMiss(uri: string, seen: JwksEntry): Promise<JwksEntry | undefined> {
    const slot = this.slot(uri);
    if (slot.inflight) return slot.inflight;
    if (slot.entry && slot.entry !== seen) return Promise.resolve(slot.entry);
    const now = this.now();
    if (now - seen.fetchedAt < this.refreshCooldownMs) return Promise.resolve(undefined);
    if (slot.failure && now - slot.failure.at < this.failureBackoffMs) return Promise.resolve(undefined);
    return this.start(uri, slot);
  }

  clear(): void {
    this.slots.clear();
  }

  private slot(uri: string): Slot {
    let slot = this.slots.get(uri);
    if (!slot) this.slots.set(uri, (slot = {}));
    return slot;
  }

  private now(): number {
    return this.clock.now().getTime();
  }

  private start(uri: string, slot: Slot): Promise<JwksEntry> {
    this.fetches++;
    const inflight = this.load(uri)
      .then(
        (entry) => {
          slot.entry = entry;
          slot.failure = undefined;
          return entry;
        },
        (e: unknown) => {
          const error = e instanceof Error ? e : new Error(String(e));
          slot.failure = { error, at: this.now() };
          throw error;
        },
      )
      .finally(() => {
        slot.inflight = undefined;
      });
    slot.inflight = inflight;
    return inflight;
  }

  private async load(uri: string): Promise<JwksEntry> {
    const res = await fetch(uri, { signal: AbortSignal.timeout(this.fetchTimeoutMs), headers: { accept: 'application/json' } });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`HTTP ${res.status}`);
    }
    const jwks = JSON.parse(await this.readCapped(res)) as JSONWebKeySet;
    // createLocalJWKSet validates the shape ({"keys": [...]}) and throws on anything else.
    return { jwks, getKey: createLocalJWKSet(jwks), fetchedAt: this.now() };
  }

  private async readCapped(res: Response): Promise<string> {
    if (!res.body) return '';
    const reader = res.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > this.maxBytes) {
        await reader.cancel();
        throw new Error(`JWKS larger than ${this.maxBytes} bytes`);
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}

export function createJwksCache(opts: JwksCacheOptions = {}): JwksCache {
  return new JwksCache(opts);
}
