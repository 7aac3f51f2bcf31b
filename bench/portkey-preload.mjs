// Loaded with `node --import` into the Portkey gateway (@portkey-ai/gateway 1.15.2) that
// bench/streamed.ts runs as its peer. Two changes, neither to what it computes:
//
// - fetch answers are re-wrapped in a new Response: on Node 20 its streamed path sets headers on
//   the upstream's Response, whose headers are immutable there, and answers 500
//   (`TypeError: immutable` in `updateHeaders`);
// - a server listening on a bare port listens on 127.0.0.1 only: its start script has a --port
//   flag but none for the address (it would listen on every interface).
import net from 'node:net';

const originalFetch = globalThis.fetch;
globalThis.fetch = async (...args) => {
  const response = await originalFetch(...args);
  return new Response(response.body, response);
};

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, host, ...rest) {
  if (typeof port === 'number' && (host === undefined || typeof host === 'function')) {
    return listen.call(this, port, '127.0.0.1', ...(typeof host === 'function' ? [host] : []), ...rest);
  }
  return listen.call(this, port, host, ...rest);
};
