/**
 * Request bodies are read up to BODY_LIMIT_BYTES and no further, whether or not the client
 * declared a Content-Length (a chunked body declares none): the REST layer reads its bodies with
 * this, and /graphql hands Yoga's own parser a body read with it.
 */
import type { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { PayloadTooLargeError } from '../errors.js';
import { graphqlAppErrorResponse } from './graphql-errors.js';
import { graphqlRouteOf } from './served-paths.js';

/**
 * Node's own request under a REST request the front door built from it (src/http/front-door.ts),
 * whose body has not been read: `readRequestLimited` reads it by its events, without the fetch
 * API's stream over it (a reader, an async iterator and a promise per piece).
 */
const nodeBodies = new WeakMap<Request, IncomingMessage>();

export function rememberNodeBody(request: Request, req: IncomingMessage): void {
  nodeBodies.set(request, req);
}

/** The request's body bytes, or null when it is larger than `limit` (reading stops there). */
export function readRequestLimited(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const req = nodeBodies.get(request);
  if (!req || request.bodyUsed) return readLimited(request.body, limit);
  nodeBodies.delete(request);
  return readNodeLimited(req, limit);
}

/**
 * As readLimited, from node's request: over the limit it is destroyed as cancelling the fetch
 * API's stream over it would; a request closed before its end fails as that stream's read would.
 */
function readNodeLimited(req: IncomingMessage, limit: number): Promise<Uint8Array<ArrayBuffer> | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        done();
        req.destroy();
        resolve(null);
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      const bytes = new Uint8Array(size);
      let offset = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, offset);
        offset += chunk.byteLength;
      }
      resolve(bytes);
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const onClose = () => {
      done();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

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
