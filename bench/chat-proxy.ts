import http from 'node:http';
import { serveIpcChild } from './lib.js';

/**
 * The floor of bench/chat.ts: a bare node:http pass-through proxy with no logic at all, in its own
 * process like the gateway (bench/chat-gateway.ts), forwarding each request (method, path, body) to
 * the fake upstream over a keep-alive agent and piping the answer back. What it adds to the direct
 * calls is what any Node process in between costs on this machine before doing anything a gateway
 * does (authentication, routing, limits, guardrails, the log). Started with an IPC channel
 * (child_process.fork) and the upstream's origin as its argument; it sends `{ ready: <base URL> }`,
 * then answers `{ id, op }` questions as the gateway does (`cpu`: its CPU so far in ms; `stop`).
 */
const upstream = new URL(process.argv[2]!);
const agent = new http.Agent({ keepAlive: true });
const UPSTREAM_HEADERS = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };

const server = http.createServer((req, res) => {
  const forward = http.request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, agent, headers: UPSTREAM_HEADERS },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/json' });
      answer.pipe(res);
    },
  );
  forward.on('error', () => res.destroy());
  req.pipe(forward);
});
await serveIpcChild(server);
