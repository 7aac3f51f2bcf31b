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
  const time = Date.now().toString(16).padStart(12, '0');
  // randomUUID's version nibble (index 14) is replaced; its variant and random bits are kept.
  const random = randomUUID();
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}

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
