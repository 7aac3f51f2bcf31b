/**
 * What chat completions and embeddings need from whatever serves a model: chunks of a chat
 * answer, and embeddings. Non-streamed chat answers are the assembly of the chunks (chunks.ts),
 * so both kinds of request read usage and text the same way.
 */
import type { WireBody } from './chat-request.js';

export interface ProviderCall {
  /** The request body in wire terms; providers send what they do not understand untouched. */
  body: WireBody;
  /** The model the upstream is asked for (no `@<virtual-key>/` prefix). */
  model: string;
  maxCompletionTokens: number | null;
  signal: AbortSignal;
}

export interface ModelProvider {
  /** A non-streamed chat completion (`chat.completion`), failures rejecting with their status. */
  complete(call: ProviderCall): Promise<WireBody>;
  /**
   * Resolves once the upstream answered (its failures before the first chunk reject, with its
   * status); the iterable then yields every chunk, the usage chunk last when there is one.
   */
  stream(call: ProviderCall): Promise<AsyncIterable<WireBody>>;
  embed(call: ProviderCall, inputs: string[]): Promise<WireBody>;
}
