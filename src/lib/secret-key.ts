import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The key that encrypts secrets at rest (integration keys). From GATEWAY_SECRET_KEY when set;
 * otherwise generated on first start and kept beside the database with owner-only permissions, so
 * a zero-configuration install still never stores a provider key in plain text. An in-memory
 * database gets a throwaway key (nothing outlives the process anyway). A server database (null:
 * no file) needs the configured key, which the configuration requires.
 */
export function loadSecretKey(configured: string | undefined, databaseFile: string | null): Buffer {
  if (configured) return Buffer.from(configured, 'hex');
  if (databaseFile === null) throw new Error('GATEWAY_SECRET_KEY is required with a server database.');
  if (databaseFile === ':memory:') return randomBytes(32);
  const path = join(dirname(databaseFile), 'secret.key');
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, randomBytes(32).toString('hex'), { mode: 0o600 });
    chmodSync(path, 0o600);
  }
  // Checked at start: a damaged file would otherwise surface only as failures to store or read
  // integration keys, long after.
  const text = readFileSync(path, 'utf8').trim();
  if (!KEY_HEX.test(text)) {
    throw new Error(`${path} does not hold a secret key (64 hexadecimal digits). Restore it from a backup, or set GATEWAY_SECRET_KEY to the key it held; without it stored integration keys cannot be read.`);
  }
  return Buffer.from(text, 'hex');
}

const KEY_HEX = /^[0-9a-fA-F]{64}$/;
