/**
 * What instances sharing one PostgreSQL database say to each other, over one dedicated connection
 * per process (outside the ORM's pool, which hands connections out per statement and cannot keep a
 * LISTEN or a session lock):
 *
 * - messages: `NOTIFY gatehouse, '<json>'`, heard by every instance's `LISTEN gatehouse` (their
 *   own included; each drops what it sent itself, which it delivered in process already).
 *   PostgreSQL limits a payload to 8000 bytes, so a longer message is sent in numbered parts that
 *   the receivers put together again. A sender's parts go out in order on this one connection
 *   (batched into statements, each delivered in order), so every receiver hears a sender's
 *   messages in the order it sent them.
 * - leadership: a session-level advisory lock taken on the same connection. Whoever holds it runs
 *   the periodic sweeps; when its process dies the connection closes, PostgreSQL releases the
 *   lock and another instance takes it at its next try.
 *
 * PostgreSQL rather than Redis because every deployment already has the database and nothing else
 * to run and secure; the messages are small (ids, sequences, cache scopes) and few.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from './logger.js';
import type { Instances } from './instances.js';
import { BUS_RECONNECTED_TOPIC, type Bus } from './pubsub.js';
import { setBounded } from './bounded-map.js';

/** The part of a `pg` client this file uses (pg ships no types; the ORM's knex hands us the client). */
export interface RawPgClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  end(): Promise<void>;
}

export const CHANNEL = 'gatehouse';
/** Below PostgreSQL's 8000-byte payload limit with room for the envelope of a part. */
const PART_BYTES = 7000;
/** Advisory lock key of the sweep leader (any constant 64-bit number; "gatehous" in ASCII). */
const LEADER_LOCK = '7449354311734621043';
const RECONNECT_MS = 500;
/** Parts sent by one statement at most. */
const BATCH = 200;
/** Incomplete long messages kept while their parts arrive. */
const MAX_PARTIAL = 100;

/** One part of a message: sender, message number, part index, part count, text. */
interface Part {
  o: string;
  m: number;
  i: number;
  n: number;
  d: string;
}

export class PgBus implements Bus, Instances {
  readonly id = randomUUID();
  readonly alone = false;
  private client: RawPgClient | null = null;
  private connecting: Promise<RawPgClient> | null = null;
  private sending: Promise<unknown> = Promise.resolve();
  /** Parts not yet sent, in order. */
  private readonly outbox: string[] = [];
  private draining = false;
  private nextMessage = 0;
  private leader = false;
  private closed = false;
  /** The connection was lost since it last listened: messages may have been missed. */
  private lost = false;
  private readonly handlers: ((topic: string, payload: unknown) => void)[] = [];
  /** Parts received of messages not yet complete, by sender and message number. */
  private readonly partial = new Map<string, string[]>();

  constructor(
    private readonly connect: () => Promise<RawPgClient>,
    private readonly logger: Logger,
  ) {}

  /** Opens the connection and listens; resolves once messages are heard. */
  async start(): Promise<void> {
    await this.connection();
  }

  onMessage(handler: (topic: string, payload: unknown) => void): void {
    this.handlers.push(handler);
  }

  send(topic: string, payload: unknown): void {
    if (this.closed) return;
    const text = encode({ t: topic, p: payload });
    const m = ++this.nextMessage;
    const chunks = splitForPayload(text, PART_BYTES);
    for (const [i, d] of chunks.entries()) this.outbox.push(JSON.stringify({ o: this.id, m, i, n: chunks.length, d } satisfies Part));
    if (!this.draining) this.sending = this.drain();
  }

  /**
   * Sends what is waiting, up to BATCH parts per statement: a busy instance (many runs streaming)
   * would otherwise queue one round trip per event, and a cache invalidation would wait behind
   * them. A statement's notifications are delivered in the order it sends them.
   */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.outbox.length > 0 && !this.closed) {
        const batch = this.outbox.splice(0, BATCH);
        const calls = batch.map((_, i) => `pg_notify($1, $${i + 2})`).join(', ');
        try {
          const client = await this.connection();
          await client.query(`select ${calls}`, [CHANNEL, ...batch]);
        } catch (error) {
          this.logger.error({ err: error, parts: batch.length }, 'instance messages not sent');
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** True while this instance holds the sweep leader's lock (tried again on each call until it does). */
  async leads(): Promise<boolean> {
    if (this.closed) return false;
    if (this.leader) return true;
    const client = await this.connection();
    const rows = (await client.query('select pg_try_advisory_lock($1::bigint) as held', [LEADER_LOCK])).rows;
    this.leader = rows[0]?.held === true;
    return this.leader;
  }

  /** Waits for messages already sent, then closes the connection (its lock goes with it). */
  async close(): Promise<void> {
    await this.sending;
    this.closed = true;
    const client = this.client;
    this.client = null;
    this.leader = false;
    await client?.end().catch(() => {});
  }

  private connection(): Promise<RawPgClient> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async open(): Promise<RawPgClient> {
    const client = await this.connect();
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      this.client = null;
      this.leader = false;
      if (this.closed) return;
      this.lost = true;
      // Messages sent while the connection is down are lost: followers of runs fill gaps from the log,
      // caches start afresh when it listens again (BUS_RECONNECTED_TOPIC).
      this.logger.warn({ err: error }, 'instance message connection lost; reconnecting');
      this.reconnect();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => {
      if (message.channel === CHANNEL && message.payload) this.receive(message.payload);
    });
    await client.query(`listen ${CHANNEL}`);
    this.client = client;
    if (this.lost) {
      this.lost = false;
      for (const handler of this.handlers) handler(BUS_RECONNECTED_TOPIC, null);
    }
    return client;
  }

  /** Tries again every RECONNECT_MS until a connection listens (or the bus closes). */
  private reconnect(): void {
    setTimeout(() => {
      if (this.closed || this.client) return;
      this.connection().catch((error: unknown) => {
        this.logger.warn({ err: error }, 'instance message connection failed; retrying');
        this.reconnect();
      });
    }, RECONNECT_MS).unref();
  }

  private receive(text: string): void {
    let part: Part;
    try {
      part = JSON.parse(text) as Part;
    } catch {
      return;
    }
    if (part.o === this.id) return;
    let whole = part.d;
    if (part.n > 1) {
      const key = `${part.o}:${part.m}`;
      const parts = this.partial.get(key) ?? [];
      parts[part.i] = part.d;
      if (parts.filter((p) => p !== undefined).length < part.n) {
        // A sender that died between parts leaves an incomplete message: keep only recent ones.
        setBounded(this.partial, key, parts, MAX_PARTIAL);
        return;
      }
      this.partial.delete(key);
      whole = parts.join('');
    }
    const message = decode(whole) as { t: string; p: unknown };
    for (const handler of this.handlers) {
      try {
        handler(message.t, message.p);
      } catch (error) {
        this.logger.error({ err: error, topic: message.t }, 'instance message handler failed');
      }
    }
  }
}

/** JSON that keeps Dates (payloads are snapshots that may carry them, e.g. an alert's createdAt). */
export function encode(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { $date: raw.toISOString() } : v;
  });
}

export function decode(text: string): unknown {
  return JSON.parse(text, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === '$date') return new Date((v as { $date: string }).$date);
    }
    return v;
  });
}

/** Bytes `text` takes as a JSON string's content (each part travels inside a JSON envelope). */
const escapedBytes = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

/** Splits text into pieces of at most `bytes` bytes once JSON-escaped, never inside a character. */
export function splitForPayload(text: string, bytes: number): string[] {
  if (escapedBytes(text) <= bytes) return [text];
  const pieces: string[] = [];
  let piece = '';
  let size = 0;
  for (const char of text) {
    const n = escapedBytes(char);
    if (size + n > bytes) {
      pieces.push(piece);
      piece = '';
      size = 0;
    }
    piece += char;
    size += n;
  }
  pieces.push(piece);
  return pieces;
}
