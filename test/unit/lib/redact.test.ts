import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecrets } from '../../../src/lib/redact.js';

const KEY = 'sk-proj-Abc123XyZ789qrstuvWXYZ0wxyz';

describe('redactSecrets', () => {
  it.each([
    ['an exact copy', `Incorrect API key provided: ${KEY}.`],
    ['an upper-cased copy', `Invalid key ${KEY.toUpperCase()}`],
    ['a lower-cased copy', `Invalid key ${KEY.toLowerCase()}`],
    ['a copy glued to other text', `auth=Bearer_${KEY}_end`],
    ['a prefix…suffix mask with dots', 'Incorrect API key provided: sk-proj-...wxyz.'],
    ['a prefix/suffix mask with stars', 'Incorrect API key provided: sk-pro***********0wxyz'],
    ['a mask with an ellipsis character', 'key sk-pr…wxyz rejected'],
    ['a suffix-only mask', 'key ending in ****0wxyz'],
    ['a prefix-only mask', 'key sk-proj-Ab**** rejected'],
    ['a long prefix', `key starting ${KEY.slice(0, 12)} is invalid`],
    ['a long piece from the middle', `quoted ${KEY.slice(10, 22)} here`],
    ['the base64 form', `Basic ${Buffer.from(KEY).toString('base64')}`],
  ])('blanks %s', (_what, text) => {
    const out = redactSecrets(text, [KEY]);
    expect(out).toContain(REDACTED);
    expect(out.toLowerCase()).not.toContain('wxyz');
    expect(out.toLowerCase()).not.toContain(KEY.slice(8, 16).toLowerCase());
  });

  it('leaves text without the secret as it is', () => {
    const text = 'Rate limit reached for gpt-4o... please retry in 20s (request req_123).';
    expect(redactSecrets(text, [KEY])).toBe(text);
  });

  it('keeps the words around a redacted key and handles several secrets', () => {
    expect(redactSecrets(`a ${KEY} b other-secret-value c`, [KEY, 'other-secret-value', null])).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });

  it('does nothing without secrets', () => {
    expect(redactSecrets(`a ${KEY}`, [undefined, ''])).toBe(`a ${KEY}`);
  });
});
