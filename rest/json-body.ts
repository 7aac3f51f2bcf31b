/** Answers longer than this (in UTF-16 units) are sent as bytes, shorter ones as a string. */
const LARGE_ANSWER_CHARS = 64 * 1024;

/** A top-level list longer than this makes an answer large enough to be encoded in pieces. */
const LONG_LIST = 200;

/** Items of a long list stringified at once: each piece a few kilobytes. */
const SLICE = 32;

/**
 * A JSON answer's body. A string body is measured for Content-Length (a pass over it) and encoded
 * again when written, so a large answer is sent as bytes encoded once; a small one is cheaper as a
 * string, which Node writes with the headers in one piece.
 *
 * An answer with a long list (a collection with 1,000 children) is written into its bytes piece
 * by piece, never as one string: V8 keeps a string over 128 KB in its large-object space, where
 * making it flat costs ~1.5 ms for 250 KB and only a full collection frees it (one stringify and
 * `Buffer.from` of a 250 KB answer: 2.5 ms CPU; in pieces: 0.8 ms). The bytes are the same.
 */
export function jsonBody(payload: unknown): string | Uint8Array<ArrayBuffer> {
  if (hasLongList(payload)) return inPieces(payload as object);
  const text = JSON.stringify(payload);
  // A Buffer from a string owns its own memory (never a SharedArrayBuffer).
  return text.length > LARGE_ANSWER_CHARS ? (Buffer.from(text) as Uint8Array<ArrayBuffer>) : text;
}

/** A list longer than `LONG_LIST`, as the answer or as one of its fields (a page's `data`). */
function hasLongList(payload: unknown): boolean {
  if (!isPlain(payload)) return false;
  if (Array.isArray(payload)) return payload.length > LONG_LIST;
  for (const key in payload) {
    const value = (payload as Record<string, unknown>)[key];
    if (Array.isArray(value) && value.length > LONG_LIST) return true;
  }
  return false;
}

/** An object or array JSON.stringify writes member by member (no `toJSON` of its own). */
function isPlain(value: unknown): value is object {
  return typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/** JSON.stringify(payload) as UTF-8: its fields one by one, a list in slices of `SLICE` items. */
function inPieces(payload: object): Uint8Array<ArrayBuffer> {
  const out = new ByteWriter();
  if (Array.isArray(payload)) writeList(out, payload);
  else {
    out.write('{');
    let first = true;
    for (const key of Object.keys(payload)) {
      const value = (payload as Record<string, unknown>)[key];
      const text = Array.isArray(value) ? undefined : JSON.stringify(value);
      // JSON.stringify leaves out a field it has no text for (undefined, a function, a symbol).
      if (text === undefined && !Array.isArray(value)) continue;
      out.write(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      if (text === undefined) writeList(out, value as unknown[]);
      else out.write(text);
    }
    out.write('}');
  }
  return out.bytes();
}

/**
 * A list as JSON.stringify writes it, a slice at a time: each slice's own brackets are written and
 * then overwritten (its `[` by the `,` after the slice before, its `]` by what follows), so the
 * items are stringified exactly as in one call (a `toJSON(key)` would see its index in the slice:
 * answers are plain data).
 */
function writeList(out: ByteWriter, list: unknown[]): void {
  if (list.length === 0) {
    out.write('[]');
    return;
  }
  for (let start = 0; start < list.length; start += SLICE) {
    const text = JSON.stringify(list.slice(start, start + SLICE));
    if (start === 0) out.write(text);
    else {
      out.drop(1); // the last slice's `]`
      const at = out.write(text);
      out.set(at, ','); // this slice's `[`
    }
  }
}

/** UTF-8 bytes appended to a buffer that doubles when full. */
class ByteWriter {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private length = 0;

  /** Appends `text`; the offset its first byte was written at. */
  write(text: string): number {
    // A UTF-16 unit is at most 3 bytes of UTF-8: Buffer.write cuts a text that does not fit.
    const needed = this.length + 3 * text.length;
    if (needed > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.buffer.length, needed));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    const at = this.length;
    this.length += this.buffer.write(text, at);
    return at;
  }

  /** Overwrites the (ASCII) byte at `at`. */
  set(at: number, char: string): void {
    this.buffer[at] = char.charCodeAt(0);
  }

  drop(bytes: number): void {
    this.length -= bytes;
  }

  bytes(): Uint8Array<ArrayBuffer> {
    return this.buffer.subarray(0, this.length) as Uint8Array<ArrayBuffer>;
  }
}
