/**
 * Stopping the server: `npm start` passes SIGTERM/SIGINT to the server, which stops taking requests
 * at once (idle keep-alive connections close, a request still arriving on an old connection is not
 * served), finishes what is in flight with `Connection: close`, and exits long before
 * SHUTDOWN_TIMEOUT_MS. Real processes and raw sockets, bounded in time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killServer, listeningPort, spawnServer, STARTS_WITHIN, type ServerProcess } from '../helpers/server-process.js';

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-shutdown-'));
const started: ServerProcess[] = [];
afterAll(() => {
  for (const server of started) killServer(server);
  rmSync(dir, { recursive: true, force: true });
});

async function npmStart(name: string): Promise<ServerProcess & { port: number }> {
  const server = spawnServer('npm', ['start', '--silent'], {
    cwd: root,
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? dir,
      PORT: '0',
      DATABASE_URL: `sqlite:${join(dir, `${name}.sqlite`)}`,
      GATEWAY_BOOTSTRAP_API_KEY: 'shutdown-test-key-0123456789',
      SHUTDOWN_TIMEOUT_MS: '10000',
    },
  });
  started.push(server);
  return { ...server, port: await listeningPort(server, 'the server') };
}

/** A raw connection that records everything it receives and when it closes. */
async function open(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let data = '';
  socket.on('data', (d) => (data += d));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, received: () => data, closed };
}

async function until(predicate: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

const query = JSON.stringify({ query: '{ __typename }' });

describe('stopping the server', () => {
  it('SIGTERM to `npm start`: idle keep-alive connections close, in-flight requests finish with Connection: close, nothing new is served', async () => {
    const server = await npmStart('term');

    // An idle keep-alive connection: one request answered, the connection left open.
    const idle = await open(server.port);
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => idle.received().includes('{"status":"ok"}'), 'the first /healthz');

    // A request in flight: headers and half of its body sent.
    const busy = await open(server.port);
    busy.socket.write(`POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-gateway-api-key: shutdown-test-key-0123456789\r\nContent-Length: ${query.length}\r\n\r\n${query.slice(0, 5)}`);
    await new Promise((r) => setTimeout(r, 200));

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await idle.closed;
    await until(() => /"signal":"SIGTERM"/.test(server.output()), 'the shutdown log line');
    expect(await refused(server.port)).toBe(true);

    // The rest of the body, and a second request pipelined behind it on the same connection.
    busy.socket.write(`${query.slice(5)}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
    await busy.closed;
    const answers = busy.received().match(/^HTTP\/1\.1 \d+/gm) ?? [];
    expect(answers).toEqual(['HTTP/1.1 200']);
    expect(busy.received()).toMatch(/\r\nconnection: close\r\n/i);
    expect(busy.received()).toContain('{"data":{"__typename":"Query"}}');

    expect(await server.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(5_000);
    expect(server.output()).toContain('"msg":"stopped"');
  }, STARTS_WITHIN + 30_000);

  it('SIGINT to `npm start` stops the server too', async () => {
    const server = await npmStart('int');
    server.child.kill('SIGINT');
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
    expect(await refused(server.port)).toBe(true);
  }, STARTS_WITHIN + 30_000);
});
