import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Config } from '../config.js';
import { shuttingDown } from '../errors.js';
import { errorBody } from './error-response.js';

/**
 * The node:http server around the app, with what a public listener needs: bounded time to send
 * headers and a whole request (a client dribbling bytes otherwise holds a connection for Node's
 * default 300 s), and a drain that really stops taking requests (`server.close()` alone leaves
 * busy keep-alive connections serving new requests until they go idle).
 */
export interface HttpServer {
  server: Server;
  /**
   * Stops taking requests at once: the listener closes, idle keep-alive connections close, responses
   * in flight finish with `Connection: close`, and a request arriving on an old connection gets a
   * 503 that closes it. Resolves when every connection has ended.
   */
  drain(): Promise<void>;
}

export function createHttpServer(handler: RequestListener, config: Pick<Config, 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS'>): HttpServer {
  const headersTimeout = config.HTTP_HEADERS_TIMEOUT_MS;
  const requestTimeout = config.HTTP_REQUEST_TIMEOUT_MS;
  const server = createServer({
    headersTimeout,
    requestTimeout,
    // Node checks the two timeouts on this interval (30 s by default), so it bounds their precision.
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, headersTimeout, requestTimeout || Infinity)),
  });

  let draining = false;
  const inFlight = new Set<ServerResponse>();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (draining) {
      refuse(res);
      return;
    }
    inFlight.add(res);
    res.on('close', () => {
      inFlight.delete(res);
      // The connection of a response that finished during the drain is idle now: close it.
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
    handler(req, res);
  });

  function drain(): Promise<void> {
    draining = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Responses that have not sent their headers yet say `Connection: close` and close after.
    for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
    server.closeIdleConnections();
    return closed;
  }

  return { server, drain };
}

/** A request that arrived after the drain began, on a connection that was still open. */
function refuse(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  const error = shuttingDown();
  const body = errorBody(error, error.extra);
  res.writeHead(error.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
    ...error.headers,
  });
  res.end(body);
}
