/**
 * src/http/event-stream.ts piped to a node:http response, as @whatwg-node/server sends it (head
 * written, then the body piped): the frames are written to the response's socket directly, one
 * HTTP chunk per flush. Read here as raw bytes: the head comes first, frames pushed in one turn
 * are one chunk, the response ends with the last chunk and the socket then serves the next
 * request; a source that ended before the body was piped has it all written; an HTTP/1.0 client
 * gets the bytes unframed; a flush of frames with no bytes writes nothing (a chunk of size 0 would
 * end the response); a client that stops reading fills its socket,
 * then its source hears "full" (the bound on what waits here is event-stream-piped.test.ts's), and
 * is resumed once the client reads.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { SseEvent } from '../../../rest/route.js';
import { sseResponse } from '../../../rest/sse.js';
import { eventStreamResponse } from '../../../src/http/event-stream.js';
import { iterateFeed, type Feed, type FeedSink } from '../../../src/lib/feed.js';

const frame = (id: number, data = '{}') => `event: e\nid: ${id}\ndata: ${data}\n\n`;
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const DONE = 'event: done\ndata: [DONE]\n\n';

/** A feed the test pushes into, counting resumes. */
function feed() {
  const state = { sink: null as FeedSink<SseEvent> | null, resumed: 0 };
  const source: Feed<SseEvent> = {
    start: (sink) => (state.sink = sink),
    resume: () => state.resumed++,
    stop: () => {},
    [Symbol.asyncIterator]: () => iterateFeed(source),
  };
  return { source, state, push: (id: number, data?: string) => state.sink!.push({ event: 'e', id, data: data ?? '{}' }) };
}

const options = { keepAliveMs: 60_000, signal: new AbortController().signal, describeError: () => ({ error: { message: 'x' } }) };

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

/** A server answering `/stream` with the stream of `source` and anything else with `ok`; its port. */
async function serve(source: Feed<SseEvent>, respond = (feed: Feed<SseEvent>) => sseResponse(feed, options)): Promise<number> {
  server = createServer((req, res) => {
    if (req.url !== '/stream') return void res.end('ok');
    const response = respond(source);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    (response.body as unknown as Readable).pipe(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** A raw client: everything it has read so far, as text. */
function client(port: number) {
  const socket = connect(port, '127.0.0.1');
  const received = { text: '' };
  socket.setEncoding('latin1');
  socket.on('data', (data: string) => (received.text += data));
  return { socket, received };
}

/** A stream served to a raw client that sent `requestHead`, once its head has arrived. */
async function opened(requestHead: string) {
  const stream = feed();
  const { socket, received } = client(await serve(stream.source));
  socket.write(requestHead);
  await until(() => stream.state.sink !== null && received.text.includes('\r\n\r\n'));
  return { ...stream, socket, received };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

const bodyOf = (text: string) => text.slice(text.indexOf('\r\n\r\n') + 4);

describe('an event stream piped to a node:http response', () => {
  it('writes its frames to the socket as HTTP chunks, one per flush, after the head; the socket then serves the next request', async () => {
    const { state, push, socket, received } = await opened('GET /stream HTTP/1.1\r\nhost: x\r\n\r\n');
    expect(received.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(received.text).toMatch(/\r\ntransfer-encoding: chunked\r\n/i);
    expect(bodyOf(received.text)).toBe('');
    push(1);
    push(2);
    push(3);
    await until(() => bodyOf(received.text).length > 0);
    expect(bodyOf(received.text)).toBe(chunk(frame(1) + frame(2) + frame(3)));
    push(4);
    state.sink!.end();
    await until(() => received.text.endsWith('0\r\n\r\n'));
    expect(bodyOf(received.text)).toBe(chunk(frame(1) + frame(2) + frame(3)) + chunk(frame(4) + DONE) + '0\r\n\r\n');
    // The response ended as node:http ends any: the connection is kept for the next request.
    received.text = '';
    socket.write('GET /other HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => received.text.endsWith('ok'));
    expect(received.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    socket.destroy();
  });

  /** Counts what reaches a socket's handle: what the kernel is asked to send, one call, one system call. */
  function countingWrites(): { writes: number; count(socket: Socket): void } {
    const counter = {
      writes: 0,
      count(socket: Socket) {
        const handle = (socket as unknown as { _handle: Record<string, (...args: unknown[]) => unknown> })._handle;
        for (const name of ['writeBuffer', 'writev', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString']) {
          const original = handle[name];
          handle[name] = (...args: unknown[]) => {
            counter.writes++;
            return original.apply(handle, args);
          };
        }
      },
    };
    return counter;
  }

  it('sends the head with the frames it holds when piped, and the last frames with the end: one system call each', async () => {
    const counter = countingWrites();
    const stream = feed();
    const started: Feed<SseEvent> = { ...stream.source, start: (sink) => (stream.source.start(sink), sink.push({ event: 'e', id: 1, data: '{}' })) };
    const port = await serve(started);
    server!.on('connection', (socket: Socket) => counter.count(socket));
    const { socket, received } = client(port);
    socket.write('GET /stream HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => bodyOf(received.text).length > 0);
    expect(received.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(bodyOf(received.text)).toBe(chunk(frame(1)));
    // The head and the frame pushed before the body was piped leave together, at once.
    expect(counter.writes).toBe(1);
    stream.push(2);
    stream.state.sink!.end();
    await until(() => received.text.endsWith('0\r\n\r\n'));
    expect(bodyOf(received.text)).toBe(chunk(frame(1)) + chunk(frame(2) + DONE) + '0\r\n\r\n');
    expect(counter.writes).toBe(2);
    socket.destroy();
  });

  it('a stream holding nothing when piped sends its head at once, alone', async () => {
    const counter = countingWrites();
    const stream = feed();
    const port = await serve(stream.source);
    server!.on('connection', (socket: Socket) => counter.count(socket));
    const { socket, received } = client(port);
    socket.write('GET /stream HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => received.text.includes('\r\n\r\n'));
    expect(bodyOf(received.text)).toBe('');
    expect(counter.writes).toBe(1);
    stream.push(1);
    await until(() => bodyOf(received.text).length > 0);
    expect(bodyOf(received.text)).toBe(chunk(frame(1)));
    expect(counter.writes).toBe(2);
    socket.destroy();
  });

  it('a source that ended before the body was piped: its frames and the end are written at once, with the head', async () => {
    const ended: Feed<SseEvent> = {
      start: (sink) => {
        sink.push({ event: 'e', id: 1, data: '{}' });
        sink.push({ event: 'e', id: 2, data: '{}' });
        sink.end();
      },
      resume: () => {},
      stop: () => {},
      [Symbol.asyncIterator]: () => iterateFeed(ended),
    };
    const counter = countingWrites();
    const port = await serve(ended);
    server!.on('connection', (socket: Socket) => counter.count(socket));
    const { socket, received } = client(port);
    socket.write('GET /stream HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => received.text.endsWith('0\r\n\r\n'));
    expect(bodyOf(received.text)).toBe(chunk(frame(1) + frame(2) + DONE) + '0\r\n\r\n');
    // The head, the frames and the end: one system call.
    expect(counter.writes).toBe(1);
    socket.destroy();
  });

  it('a flush whose frames have no bytes writes nothing (not the terminating chunk)', async () => {
    const stream = feed();
    const bytes = (event: SseEvent) => Buffer.from(event.data);
    const respond = (source: Feed<SseEvent>) =>
      eventStreamResponse(source, { ...options, frame: bytes, end: 'z', failure: () => '', ping: Buffer.from(':\n\n') }, { headers: { 'content-type': 'text/event-stream' } });
    const { socket, received } = client(await serve(stream.source, respond));
    socket.write('GET /stream HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => stream.state.sink !== null && received.text.includes('\r\n\r\n'));
    stream.push(1, '');
    await new Promise((resolve) => setTimeout(resolve, 50));
    stream.push(2, 'a');
    await until(() => bodyOf(received.text).length > 0);
    stream.state.sink!.end();
    await until(() => received.text.endsWith('0\r\n\r\n'));
    expect(bodyOf(received.text)).toBe(chunk('a') + chunk('z') + '0\r\n\r\n');
    socket.destroy();
  });

  it('an HTTP/1.0 client gets the frames unframed, and the connection closes at the end', async () => {
    const { state, push, socket, received } = await opened('GET /stream HTTP/1.0\r\n\r\n');
    push(1);
    push(2);
    state.sink!.end();
    await once(socket, 'end');
    expect(received.text).not.toMatch(/transfer-encoding/i);
    expect(bodyOf(received.text)).toBe(frame(1) + frame(2) + DONE);
  });

  it('a client that stops reading: once its socket is full its source hears "full", and is resumed once the client reads; nothing is lost', async () => {
    const { state, push, socket, received } = await opened('GET /stream HTTP/1.1\r\nhost: x\r\n\r\n');
    socket.pause();
    const big = 'x'.repeat(256 * 1024);
    // Pushed a flush at a time until the socket (and the kernel's buffers) are full.
    let id = 0;
    let answer = true;
    while (answer && id < 2000) {
      answer = push(++id, big);
      if (id % 4 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(answer).toBe(false);
    const resumed = state.resumed;
    socket.resume();
    await until(() => state.resumed > resumed);
    state.sink!.end();
    await until(() => received.text.endsWith('0\r\n\r\n'));
    const ids = [...bodyOf(received.text).matchAll(/\nid: (\d+)\n/g)].map((match) => Number(match[1]));
    expect(ids).toEqual(Array.from({ length: id }, (_, i) => i + 1));
    socket.destroy();
  });
});
