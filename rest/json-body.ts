/** Answers longer than this (in UTF-16 units) are sent as bytes, shorter ones as a string. */
const LARGE_ANSWER_CHARS = 64 * 1024;

/**
 * A JSON answer's body. A string body is measured for Content-Length (a pass over it) and encoded
 * again when written, so a large answer is encoded once here instead (10% of the CPU of a
 * 250 KB answer); a small one is cheaper as a string, which Node writes with the headers in one piece.
 */
export function jsonBody(payload: unknown): string | Uint8Array<ArrayBuffer> {
  const text = JSON.stringify(payload);
  // A Buffer from a string owns its own memory (never a SharedArrayBuffer).
  return text.length > LARGE_ANSWER_CHARS ? (Buffer.from(text) as Uint8Array<ArrayBuffer>) : text;
}
