/**
 * Slow clients are cut off: a request whose headers or body dribble in longer than the configured
 * timeouts is answered 408 and its connection closed, while the client is still sending.
 */
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFrom } from '../../src/config.js';
import { createHttpServer, type HttpServer } from '../../src/http/http-server.js';

let http: HttpServer;
let port: number;

beforeAll(async () => {
  const config = configFrom({ HTTP_HEADERS_TIMEOUT_MS: 300, HTTP_REQUEST_TIMEOUT_MS: 600 });
  http = createHttpServer((req, res) => {
    // Reads the whole body, then answers: only a complete request gets a 200.
    req.resume();
    // /slow answers after the request timeout: only receiving the request is timed, not the answer.
    req.on('end', () => (req.url === '/slow' ? setTimeout(() => res.end('late'), 1_000) : res.end('ok')));
  }, config);
  await new Promise<void>((resolve) => http.server.listen(0, '127.0.0.1', resolve));
  port = (http.server.address() as AddressInfo).port;
});
afterAll(() => http.drain());

/** Sends `first`, then one byte every 50 ms (for at most 5 s); resolves with what came back when the server closed. */
function dribble(first: string): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(first));
    let answer = '';
    const timer = setInterval(() => {
      if (Date.now() - started > 5_000) {
        clearInterval(timer);
        socket.destroy();
        reject(new Error('the server kept the slow connection open for 5 s'));
      } else if (!socket.destroyed && socket.writable) socket.write('x');
    }, 50);
    socket.on('data', (d) => (answer += d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer, closedAfterMs: Date.now() - started });
    });
  });
}

describe('HTTP timeouts', () => {
  it('a body dribbled slower than HTTP_REQUEST_TIMEOUT_MS is cut off with 408', async () => {
    const { answer, closedAfterMs } = await dribble('POST /v1/x HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(550);
  });

  it('headers dribbled slower than HTTP_HEADERS_TIMEOUT_MS are cut off with 408', async () => {
    const { answer, closedAfterMs } = await dribble('GET /healthz HTTP/1.1\r\nX-Slow: ');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(250);
  });

  it('a request sent at normal speed is served', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'hello' });
    expect(await response.text()).toBe('ok');
  });

  it('a complete request whose answer takes longer than the timeouts is answered', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/slow`, { method: 'POST', body: 'hello' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('late');
  });

  it('configuration refuses a headers timeout above the request timeout', () => {
    expect(() => configFrom({ HTTP_HEADERS_TIMEOUT_MS: 5_000, HTTP_REQUEST_TIMEOUT_MS: 1_000 })).toThrow(
      'HTTP_HEADERS_TIMEOUT_MS: must not be greater than HTTP_REQUEST_TIMEOUT_MS',
    );
  });
});
