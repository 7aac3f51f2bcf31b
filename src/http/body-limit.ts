/**
 * Request bodies are read up to BODY_LIMIT_BYTES and no further, whether or not the client
 * declared a Content-Length (a chunked body declares none): the REST layer reads its bodies with
 * this, and /graphql hands Yoga's own parser a body read with it.
 */
import type { Plugin } from 'graphql-yoga';
import { PayloadTooLargeError } from '../errors.js';
import { graphqlAppErrorResponse } from './graphql-errors.js';
import { graphqlRouteOf } from './served-paths.js';

/** The body's bytes, or null when it is larger than `limit` (reading stops there). */
export async function readLimited(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array<ArrayBuffer> | null> {
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Wraps a Yoga request parser so that a body without a Content-Length is read with the limit
 * first (a declared length is checked before parsing starts); `tooLarge` answers when it is over.
 */
export function limitedParser<T>(parse: (request: Request) => T | Promise<T>, limit: number, tooLarge: () => Response): (request: Request) => Promise<T | Response> {
  return async (request) => {
    // GET and HEAD carry no body (their parameters are in the URL).
    if (request.method === 'GET' || request.method === 'HEAD' || request.headers.get('content-length') !== null) return parse(request);
    const bytes = await readLimited(request.body, limit);
    if (bytes === null) return tooLarge();
    return parse(new Request(request.url, { method: request.method, headers: request.headers, body: bytes }));
  };
}

/**
 * The limit at the GraphQL endpoints (the REST layer reads its bodies with `readLimited`): a
 * declared length over it is refused before anything is read, an undeclared one while it is read.
 */
export function graphqlBodyLimitPlugin(limit: number): Plugin {
  const tooLarge = () => graphqlAppErrorResponse(new PayloadTooLargeError(limit));
  return {
    onRequest({ request, url, endResponse }) {
      if (!graphqlRouteOf(url.pathname)) return;
      const declared = Number(request.headers.get('content-length') ?? NaN);
      if (declared > limit) endResponse(tooLarge());
    },
    onRequestParse({ requestParser, setRequestParser }) {
      if (requestParser) setRequestParser(limitedParser(requestParser, limit, tooLarge));
    },
  };
}
