import http, { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { postUpstream } from '../../../src/lib/upstream-post.js';
import { haveSameMap } from '../../helpers/same-map.js';

// A whole body is read by its events (not the stream's async iterator): it must still end, fail
// and abort as the iterator did, never hang.
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url!.startsWith('/echo')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, url: req.url, authorization: req.headers.authorization ?? null, length: req.headers['content-length'] }));
      } else if (req.url === '/whole') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"answer":');
        setTimeout(() => res.end('"ünïcode"}'), 5);
      } else if (req.url === '/cut') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"answer":');
        setTimeout(() => res.socket!.destroy(), 5);
      } else if (req.url === '/stall') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"answer":');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const post = (path: string, signal = new AbortController().signal) => postUpstream(`${url}${path}`, { 'content-type': 'application/json' }, '{}', signal);

describe('postUpstream: a whole body', () => {
  it('is read in pieces to its end as UTF-8', async () => {
    const response = await post('/whole');
    expect(response.status).toBe(200);
    expect(JSON.parse(await response.text())).toEqual({ answer: 'ünïcode' });
  });

  it('cut off by the connection rejects instead of hanging', async () => {
    const response = await post('/cut');
    await expect(response.text()).rejects.toThrow();
  });

  it('whose call is aborted while it is read rejects instead of hanging', async () => {
    const controller = new AbortController();
    const response = await post('/stall', controller.signal);
    const text = response.text();
    setTimeout(() => controller.abort(), 5);
    await expect(text).rejects.toThrow();
  });
});

describe('postUpstream: the target', () => {
  it('is the URL given, each call its own, though each URL is parsed once: path, query, port and credentials', async () => {
    const first = await postUpstream(`${url}/echo/one?x=1`, {}, '{"a":1}', new AbortController().signal);
    expect(JSON.parse(await first.text())).toEqual({ method: 'POST', url: '/echo/one?x=1', authorization: null, length: '7' });
    const again = await postUpstream(`${url}/echo/one?x=1`, {}, '{}', new AbortController().signal);
    expect(JSON.parse(await again.text())).toEqual({ method: 'POST', url: '/echo/one?x=1', authorization: null, length: '2' });
    const other = await postUpstream(`${url}/echo/two`, {}, '{}', new AbortController().signal);
    expect(JSON.parse(await other.text())).toMatchObject({ url: '/echo/two' });
    const withUser = await postUpstream(url.replace('http://', 'http://us%40er:p%3Ass@') + '/echo/auth', {}, '{}', new AbortController().signal);
    expect(JSON.parse(await withUser.text())).toMatchObject({ url: '/echo/auth', authorization: `Basic ${Buffer.from('us@er:p:ss').toString('base64')}` });
  });

  it("builds every call's request options and headers with the same maps (no new hidden class per call)", async () => {
    const request = vi.spyOn(http, 'request');
    try {
      const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-test' };
      for (let i = 0; i < 3; i++) await (await postUpstream(`${url}/echo/maps`, headers, `{"n":${i}}`, new AbortController().signal)).text();
      const [, second, third] = request.mock.calls.map(([options]) => options as unknown as { headers: Record<string, string> });
      expect(third!.headers).toEqual({ ...headers, 'content-length': '7' });
      expect(haveSameMap(second!, third!)).toBe(true);
      expect(haveSameMap(second!.headers, third!.headers)).toBe(true);
    } finally {
      request.mockRestore();
    }
  });

  it('with a protocol it cannot speak rejects (no throw)', async () => {
    const call = postUpstream('ftp://127.0.0.1/echo', {}, '{}', new AbortController().signal);
    await expect(call).rejects.toThrow('Unsupported protocol ftp:');
  });
});
