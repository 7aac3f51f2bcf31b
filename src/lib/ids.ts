import { randomFillSync, randomUUID } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Cryptographically random bytes drawn from a pool refilled 4 KB at a time: a run makes several
 * ids, and a fresh buffer (and its iterator) per id cost more than the rest of making the id.
 * Each byte is used once.
 */
const pool = Buffer.allocUnsafe(4096);
let poolAt = pool.length;

function randomByte(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++];
}

/** Random alphanumerics without modulo bias (rejection sampling over random bytes: 248 = 4 × 62). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += ALPHANUMERIC[byte % 62];
  }
  return out;
}

/** OpenAI-style identifiers: `asst_`, `thread_`, `msg_`, `run_`, `step_`, `call_` + 24 alphanumerics. */
export function prefixedId(prefix: string): string {
  return `${prefix}_${randomAlphanumeric(24)}`;
}

export function uuid(): string {
  return randomUUID();
}

/**
 * A UUID version 7 (RFC 9562): the Unix time in milliseconds in its first 48 bits, then the
 * version, 74 random bits and the variant. For the ids of rows written on every request (request
 * log, guardrail evaluations, usage reservations): ids that grow with time are appended at the
 * end of their primary-key index, where random ones land on a random page of it each time (a page
 * copied into the transaction's journal or written to the WAL per row); on SQLite, inserting a
 * batch of guardrail evaluations cost ~20 µs a row more with random ids once the table held
 * ~90,000 rows. Ids made in the same millisecond are in random order among themselves.
 */
export function timeOrderedUuid(): string {
  // Spelled out byte by byte from a table (randomUUID's string cut and joined again cost ~1 µs: 15 times this).
  if (poolAt > pool.length - 10) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const r = poolAt;
  poolAt += 10;
  const ms = Date.now();
  const high = Math.floor(ms / 0x1_0000_0000);
  const low = ms >>> 0;
  return (
    HEX[high >>> 8] + HEX[high & 0xff] + HEX[low >>> 24] + HEX[(low >>> 16) & 0xff] + '-' + HEX[(low >>> 8) & 0xff] + HEX[low & 0xff] + '-' +
    HEX[0x70 | (pool[r] & 0x0f)] + HEX[pool[r + 1]] + '-' + HEX[0x80 | (pool[r + 2] & 0x3f)] + HEX[pool[r + 3]] + '-' +
    HEX[pool[r + 4]] + HEX[pool[r + 5]] + HEX[pool[r + 6]] + HEX[pool[r + 7]] + HEX[pool[r + 8]] + HEX[pool[r + 9]]
  );
}

/** Each byte's two lower-case hex digits. */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** A URL-safe slug from a name: lower case, runs of other characters become one dash. */
export function slugify(name: string, fallback = 'item'): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return slug || fallback;
}
