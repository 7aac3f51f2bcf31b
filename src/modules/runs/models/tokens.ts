/**
 * Token counting with gpt-tokenizer (o200k_base). Special-token strings such as `<|endoftext|>`
 * in user text are counted as plain text instead of throwing, as an API would.
 *
 * Bounded cost for any input: gpt-tokenizer's merge step is quadratic in the length of one
 * pre-token, and a text without spaces is one pre-token (60,000 characters took 4 s). So the
 * tokenizer only ever sees pieces of at most PIECE_MAX characters: cut before a space that follows
 * a non-space, which is always a pre-token boundary (no o200k pre-token has a space after another
 * character), so the count is exact for ordinary text; a longer run without such a space is cut
 * every PIECE_MAX characters (its count then differs slightly from one whole-string call, and
 * stays at most its UTF-8 byte length, as every token is at least one byte).
 *
 * Linear is still long for a megabyte (~0.3 s), so the async functions yield to the event loop
 * every SLICE_MS of work, and request-path estimates use `tokenUpperBounds` (exact up to a budget,
 * byte lengths beyond it).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { decodeGenerator, encode } from 'gpt-tokenizer';
import type { ChatMessage, ToolCall } from './model.js';

const PLAIN = { disallowedSpecial: new Set<string>() };

/** Longest text handed to the tokenizer at once (a forced cut costs ~2 ms at this size). */
export const PIECE_MAX = 1000;
/** Longest stretch of tokenizing between two turns of the event loop. */
const SLICE_MS = 4;
/** Characters `tokenUpperBounds` counts exactly per call; beyond them it uses byte lengths. */
export const EXACT_COUNT_BUDGET = 64 * 1024;

/** The pieces the tokenizer sees: each at most PIECE_MAX characters, together exactly `text`. */
export function* tokenizerPieces(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > PIECE_MAX) {
    const limit = start + PIECE_MAX;
    // Searched by hand: lastIndexOf has no lower bound and would rescan the whole text each time.
    let cut = limit;
    while (cut > start && !(text.charCodeAt(cut) === 0x20 && !isSpace(text.charCodeAt(cut - 1)))) cut--;
    if (cut <= start) {
      cut = limit;
      // Never between the halves of a surrogate pair.
      if (isHighSurrogate(text.charCodeAt(cut - 1))) cut--;
    }
    yield text.slice(start, cut);
    start = cut;
  }
  if (start < text.length) yield text.slice(start);
}

export function encodeText(text: string): number[] {
  const tokens: number[] = [];
  for (const piece of tokenizerPieces(text)) for (const token of encode(piece, PLAIN)) tokens.push(token);
  return tokens;
}

export function countTokens(text: string): number {
  let total = 0;
  for (const piece of tokenizerPieces(text)) total += encode(piece, PLAIN).length;
  return total;
}

/** `encodeText` without holding the event loop for more than SLICE_MS at a time. */
export async function encodeTextAsync(text: string): Promise<number[]> {
  const tokens: number[] = [];
  let sliceStart = performance.now();
  for (const piece of tokenizerPieces(text)) {
    for (const token of encode(piece, PLAIN)) tokens.push(token);
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  return tokens;
}

export async function countTokensAsync(text: string): Promise<number> {
  // Short texts (nearly all) are counted at once, without a promise per piece.
  if (text.length <= PIECE_MAX) return countTokens(text);
  return (await encodeTextAsync(text)).length;
}

/** Prompt size as the gateway reports it: the tokens of every message's content. */
export async function countPromptTokens(messages: readonly ChatMessage[]): Promise<number> {
  let total = 0;
  for (const m of messages) total += await countTokensAsync(m.content);
  return total;
}

/** Completion size of tool calls: their names and argument texts. */
export async function countToolCallTokens(calls: readonly ToolCall[]): Promise<number> {
  let total = 0;
  for (const c of calls) total += (await countTokensAsync(c.name)) + (await countTokensAsync(c.arguments));
  return total;
}

/**
 * Cheap upper bounds of each text's token count, for estimates made inside a request: exact
 * counts while the texts counted so far total at most EXACT_COUNT_BUDGET characters, then the
 * UTF-8 byte length (never below the count: every token is at least one byte).
 */
export function tokenUpperBounds(texts: readonly string[]): number[] {
  let budget = EXACT_COUNT_BUDGET;
  return texts.map((text) => {
    if (text.length > budget) return Buffer.byteLength(text, 'utf8');
    budget -= text.length;
    return countTokens(text);
  });
}

/**
 * Decodes tokens into text pieces of about `perPiece` tokens each. The decoder holds back a
 * token that ends inside a multi-byte character, so pieces never split a character and their
 * concatenation is the decoded text.
 */
export function* decodePieces(tokens: readonly number[], perPiece: number): Generator<string> {
  let piece = '';
  let count = 0;
  for (const part of decodeGenerator(tokens)) {
    piece += part;
    if (++count >= perPiece) {
      yield piece;
      piece = '';
      count = 0;
    }
  }
  if (piece !== '') yield piece;
}

function isSpace(code: number): boolean {
  // \s as the pre-tokenizer sees it, for the characters that matter here.
  return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x3000 || (code >= 0x2000 && code <= 0x200a);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
