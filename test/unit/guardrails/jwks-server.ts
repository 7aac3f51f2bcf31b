import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A JWKS endpoint on 127.0.0.1 that counts its hits; tests change what it serves and how fast. */
export interface JwksServer {
  readonly url: string;
  readonly hits: number;
  keys: object[];
  delayMs: number;
  /** When set, the server accepts requests but never answers. */
  hang: boolean;
  close(): Promise<void>;
}

export async function startJwksServer(keys: object[] = []): Promise<JwksServer> {
  let hits = 0;
  const state = { keys, delayMs: 0, hang: false };
  const server = createServer((_req, res) => {
    hits++;
    if (state.hang) return;
    const body = JSON.stringify({ keys: state.keys });
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    }, state.delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    get hits() {
      return hits;
    },
    get keys() {
      return state.keys;
    },
    set keys(k) {
      state.keys = k;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms) {
      state.delayMs = ms;
    },
    get hang() {
      return state.hang;
    },
    set hang(h) {
      state.hang = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
