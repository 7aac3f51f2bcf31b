/**
 * Token counting has bounded cost for any input: the tokenizer never sees more than PIECE_MAX
 * characters at once, counts stay exact for ordinary text, large texts are counted without holding
 * the event loop, and request-path bounds never fall below the count.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

const seen: number[] = [];
vi.mock('gpt-tokenizer', async (importOriginal) => {
  const real = await importOriginal<typeof import('gpt-tokenizer')>();
  return {
    ...real,
    encode: (text: string, options?: Parameters<typeof real.encode>[1]) => {
      seen.push(text.length);
      return real.encode(text, options);
    },
  };
});

const { encode } = await vi.importActual<typeof import('gpt-tokenizer')>('gpt-tokenizer');
const { PIECE_MAX, EXACT_COUNT_BUDGET, countTokens, countTokensAsync, encodeText, encodeTextAsync, tokenUpperBounds, tokenizerPieces } = await import(
  '../../../src/modules/runs/models/tokens.js'
);

const exact = (text: string) => encode(text, { disallowedSpecial: new Set() }).length;
const ordinary = [
  'The quick brown fox jumps over the lazy dog. ',
  "It's 12,345.67 dollars (or €11k); don't panic!\n",
  'function f(a, b) {\n  return a  +  b; // sum\n}\n\n',
  '日本語のテキストと English mixed, 😀 emoji 🎉 here.\r\n',
  '   indented\twith\ttabs    and   runs of    spaces  ',
  'url: https://example.com/a/b?c=d&e=f <|endoftext|> ',
]
  .join('')
  .repeat(120);

beforeEach(() => {
  seen.length = 0;
});

describe('token counting', () => {
  it('counts ordinary text exactly as one whole-string call would', async () => {
    expect(ordinary.length).toBeGreaterThan(20 * PIECE_MAX);
    const whole = exact(ordinary);
    expect(countTokens(ordinary)).toBe(whole);
    expect(await countTokensAsync(ordinary)).toBe(whole);
    expect(encodeText(ordinary)).toEqual(encode(ordinary, { disallowedSpecial: new Set() }));
    for (let size = 1; size < 3000; size += 97) expect(countTokens(ordinary.slice(0, size))).toBe(exact(ordinary.slice(0, size)));
  });

  it.each([
    ['no spaces', 'a'.repeat(200_000)],
    ['only spaces', ' '.repeat(50_000)],
    ['emoji without spaces', '😀'.repeat(30_000)],
    ['digits and punctuation', '1.2,3;'.repeat(20_000)],
    ['spaces after spaces', `x${' '.repeat(5000)}y`.repeat(10)],
  ])('never hands the tokenizer more than PIECE_MAX characters (%s)', async (_what, text) => {
    const count = countTokens(text);
    expect(Math.max(...seen)).toBeLessThanOrEqual(PIECE_MAX);
    seen.length = 0;
    expect(await countTokensAsync(text)).toBe(count);
    expect(Math.max(...seen)).toBeLessThanOrEqual(PIECE_MAX);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(Buffer.byteLength(text, 'utf8'));
    const pieces = [...tokenizerPieces(text)];
    expect(pieces.join('')).toBe(text);
    for (const piece of pieces) expect(piece.length === 0 || /[\uD800-\uDBFF]$/.test(piece)).toBe(false);
  });

  it('lets the event loop turn while a large text is counted', async () => {
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    try {
      const big = ordinary.repeat(20);
      expect(await encodeTextAsync(big)).toEqual(encodeText(big));
    } finally {
      clearInterval(timer);
    }
    expect(turns).toBeGreaterThan(0);
  });

  it('upper bounds: exact within the budget, the UTF-8 byte length beyond it, never below the count', () => {
    const small = 'hello world, how are you?';
    const large = 'é'.repeat(EXACT_COUNT_BUDGET + 1);
    const bounds = tokenUpperBounds([small, large, small]);
    expect(bounds[0]).toBe(exact(small));
    expect(bounds[1]).toBe(Buffer.byteLength(large, 'utf8'));
    expect(bounds[1]).toBeGreaterThanOrEqual(countTokens(large));
    expect(bounds[2]).toBe(exact(small));
    // Many texts: exact ones stop once the budget is spent, so the work per call is bounded.
    seen.length = 0;
    const many = tokenUpperBounds(Array(200).fill(ordinary.slice(0, 2000)));
    expect(seen.reduce((sum, n) => sum + n, 0)).toBeLessThanOrEqual(EXACT_COUNT_BUDGET);
    many.forEach((bound) => expect(bound).toBeGreaterThanOrEqual(exact(ordinary.slice(0, 2000))));
  });
});
