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
