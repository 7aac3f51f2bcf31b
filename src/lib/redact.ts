/**
 * Blanks secrets out of text that came from somewhere we do not control (an upstream's error
 * message), before it is stored or shown. Upstreams rarely echo a key verbatim: they mask it
 * (`sk-abc...wxyz`, `sk-abc***wxyz`), change its case or quote a piece of it, so every
 * recognisable form is replaced, not only an exact copy:
 *   - any word that shares a run of MIN_SHARED characters with a secret (case-insensitive): a
 *     copy, an upper-cased copy, a long prefix or suffix, a copy glued to other text;
 *   - any masked word (`*`, `•`, `…` or `..` inside it) one of whose visible pieces starts or ends
 *     the secret, or is a run of it of MIN_MASKED_PIECE characters;
 *   - the same for the secret's base64 forms (Basic credentials, encoded headers).
 * Over-redacting a word of an error message costs little; leaking a key costs a rotation.
 */

export const REDACTED = '[redacted]';

/** Characters shared with a secret that make an unmasked word a copy of it. */
const MIN_SHARED = 8;
/** A visible piece of a masked word this long that occurs in the secret gives it away. */
const MIN_MASKED_PIECE = 4;

/** Words as keys are written: letters, digits, `_`, `-`, plus mask characters and `..` runs. */
const WORD = /(?:[\p{L}\p{N}_\-*•…]|\.{2,})+/gu;
const MASK = /(?:[*•…]|\.{2,})+/u;
const MASK_SPLIT = /(?:[*•…]|\.{2,})+/gu;

export function redactSecrets(text: string, secrets: readonly (string | null | undefined)[]): string {
  const forms = secretForms(secrets);
  if (forms.length === 0) return text;
  return text.replace(WORD, (word) => (forms.some((secret) => givesAway(word, secret)) ? REDACTED : word));
}

/** Each secret lower-cased, with its base64 and base64url encodings. */
function secretForms(secrets: readonly (string | null | undefined)[]): string[] {
  const out = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    const bytes = Buffer.from(secret, 'utf8');
    for (const form of [secret, bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url')]) {
      out.add(form.toLowerCase());
    }
  }
  return [...out];
}

function givesAway(word: string, secret: string): boolean {
  const lower = word.toLowerCase();
  if (sharesRun(lower, secret, Math.min(MIN_SHARED, secret.length))) return true;
  if (!MASK.test(lower)) return false;
  return lower
    .split(MASK_SPLIT)
    .filter((piece) => piece !== '')
    .some(
      (piece) =>
        (piece.length >= 2 && (secret.startsWith(piece) || secret.endsWith(piece))) ||
        sharesRun(piece, secret, Math.min(MIN_MASKED_PIECE, secret.length)),
    );
}

/** Whether `word` and `secret` have a common substring of `size` characters. */
function sharesRun(word: string, secret: string, size: number): boolean {
  for (let i = 0; i + size <= word.length; i++) {
    if (secret.includes(word.slice(i, i + size))) return true;
  }
  return false;
}
