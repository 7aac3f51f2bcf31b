import { createCipheriv, createDecipheriv, hash, randomBytes } from 'node:crypto';

export function sha256Hex(value: string): string {
  // One shot (Node ≥ 20.12): no Hash object per call; 0.74 → 0.27 µs for an API key.
  return hash('sha256', value, 'hex');
}

/**
 * AES-256-GCM: authenticated, so a tampered ciphertext fails to decrypt instead of yielding garbage.
 * Format: base64(iv[12] | tag[16] | ciphertext), prefixed with a version so the scheme can change.
 */
export function encryptSecret(plaintext: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

export function decryptSecret(encoded: string, key: Buffer): string {
  if (!encoded.startsWith('v1:')) throw new Error('Unknown secret format.');
  const raw = Buffer.from(encoded.slice(3), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** Shows only the last four characters of a secret. */
export function maskSecret(secret: string): string {
  if (secret.length <= 4) return '*'.repeat(secret.length);
  return `${'*'.repeat(Math.min(secret.length - 4, 12))}${secret.slice(-4)}`;
}
