/**
 * Token counting with gpt-tokenizer (o200k_base). Special-token strings such as `<|endoftext|>`
 * in user text are counted as plain text instead of throwing, as an API would.
 */
import { decodeGenerator, encode } from 'gpt-tokenizer';
import type { ChatMessage, ToolCall } from './model.js';

const PLAIN = { disallowedSpecial: new Set<string>() };

export function encodeText(text: string): number[] {
  return encode(text, PLAIN);
}

export function countTokens(text: string): number {
  return encodeText(text).length;
}

/** Prompt size as the gateway reports it: the tokens of every message's content. */
export function countPromptTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const m of messages) total += countTokens(m.content);
  return total;
}

/** Completion size of tool calls: their names and argument texts. */
export function countToolCallTokens(calls: readonly ToolCall[]): number {
  let total = 0;
  for (const c of calls) total += countTokens(c.name) + countTokens(c.arguments);
  return total;
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
