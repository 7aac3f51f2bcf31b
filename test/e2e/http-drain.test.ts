/**
 * The drain in-process, for what a spawned server makes hard to time: a response already under
 * way when the drain begins finishes, and a request that then arrives on its kept-alive
 * connection is refused with a 503 envelope and `Connection: close`, never served.
 */
import { connect, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { configFrom } from '../../src/config.js';
import { createHttpServer } from '../../src/http/http-server.js';

describe('drain', () => {
  it('refuses a request arriving on an old connection after the drain began', async () => {
    const served: string[] = [];
    const http = createHttpServer((req, res) => {
      served.push(req.url ?? '');
      // Headers and a first chunk at once, the end a little later: a response under way.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first ');
      setTimeout(() => res.end('done'), 300);
    }, configFrom({}));
    await new Promise<void>((resolve) => http.server.listen(0, '127.0.0.1', resolve));
    const socket = connect((http.server.address() as AddressInfo).port, '127.0.0.1');
    let received = '';
    socket.on('data', (d) => (received += d));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /under-way HTTP/1.1\r\nHost: x\r\n\r\n');
    const until = Date.now() + 5_000;
    while (!received.includes('first') && Date.now() < until) await new Promise((r) => setTimeout(r, 10));

    const drained = http.drain();
    socket.write('GET /too-late HTTP/1.1\r\nHost: x\r\n\r\n');
    await closed;
    await drained;

    expect(served).toEqual(['/under-way']);
    expect(received.match(/^HTTP\/1\.1 \d+/gm)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 503']);
    expect(received).toContain('done');
    const refusal = received.slice(received.indexOf('HTTP/1.1 503'));
    expect(refusal).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(refusal.slice(refusal.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { message: 'The server is shutting down; retry the request.', type: 'server_error', param: null, code: 'shutting_down' },
    });
  });
});
