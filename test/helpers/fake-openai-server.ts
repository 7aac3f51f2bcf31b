/**
 * A real HTTP peer speaking streamed `/chat/completions`, scripted per test. It records every
 * request so tests can assert what an adapter actually sent over the wire.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: any;
  /** Set when the client went away before the reply was complete (abort, timeout, early stop). */
  clientClosed: boolean;
  /** The client's port: calls on one kept-alive connection share it. */
  remotePort: number | undefined;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** Wait before sending the status line (a server that is slow to answer at all). */
  headerDelayMs?: number;
  /** Wait before each SSE event (a slow stream). */
  chunkDelayMs?: number;
  /** A plain JSON body instead of a stream (error replies). */
  json?: unknown;
  /** SSE `data:` payloads in order: objects are JSON-encoded, strings are sent as they are. */
  sse?: unknown[];
  /** Keep the connection open after the last event, never ending the response. */
  hang?: boolean;
}

export type FakeScript = (req: RecordedRequest) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAI {
  /** Base URL including `/v1`, to be given to an adapter as `baseUrl`. */
  url: string;
  requests: RecordedRequest[];
  setScript(script: FakeScript | FakeReply): void;
  close(): Promise<void>;
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

const BASE = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'fake-model' };

function chunk(delta: object, finishReason: string | null = null): object {
  return { ...BASE, choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

/** A text answer streamed as the given pieces, then a finish chunk, a usage chunk and [DONE]. */
export function textReply(
  pieces: string[],
  options: { finishReason?: string; usage?: FakeUsage | null; chunkDelayMs?: number } = {},
): FakeReply {
  const sse: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (const content of pieces) sse.push(chunk({ content }));
  sse.push(chunk({}, options.finishReason ?? 'stop'));
  if (options.usage !== null) sse.push({ ...BASE, choices: [], usage: options.usage ?? usageOf(3, pieces.length) });
  sse.push('[DONE]');
  return { sse, chunkDelayMs: options.chunkDelayMs };
}

/**
 * Tool calls as OpenAI streams them: the first fragment of each call carries id, type and name,
 * the arguments follow in `splitInto` fragments carrying only the index.
 */
export function toolCallsReply(
  calls: { id: string; name: string; arguments: string }[],
  options: { splitInto?: number; usage?: FakeUsage | null; finishReason?: string } = {},
): FakeReply {
  const parts = Math.max(1, options.splitInto ?? 3);
  const sse: unknown[] = [chunk({ role: 'assistant', content: null })];
  calls.forEach((call, index) => {
    sse.push(
      chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    const size = Math.ceil(call.arguments.length / parts) || 1;
    for (let at = 0; at < call.arguments.length; at += size) {
      sse.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(at, at + size) } }] }));
    }
  });
  sse.push(chunk({}, options.finishReason ?? 'tool_calls'));
  if (options.usage !== null) sse.push({ ...BASE, choices: [], usage: options.usage ?? usageOf(10, 20) });
  sse.push('[DONE]');
  return { sse };
}

/** An OpenAI-shaped JSON error. */
export function errorReply(status: number, message: string, headers?: Record<string, string>): FakeReply {
  return { status, headers, json: { error: { message, type: 'server_error', param: null, code: null } } };
}

function usageOf(prompt: number, completion: number): FakeUsage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export async function startFakeOpenAI(script: FakeScript | FakeReply = textReply(['Hello', ' world'])): Promise<FakeOpenAI> {
  let current = script;
  const requests: RecordedRequest[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();

  // Delays end early when the client goes away, so closing never waits on a sleeping reply.
  const wait = (ms: number | undefined, res: ServerResponse) =>
    new Promise<void>((resolve) => {
      if (!ms) return resolve();
      const timer = setTimeout(done, ms);
      timers.add(timer);
      res.once('close', done);
      function done() {
        clearTimeout(timer);
        timers.delete(timer);
        res.off('close', done);
        resolve();
      }
    });

  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const piece of req) raw += piece;
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // recorded as text
    }
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      clientClosed: false,
      remotePort: req.socket.remotePort,
    };
    requests.push(recorded);
    res.once('close', () => {
      if (!res.writableFinished) recorded.clientClosed = true;
    });

    if (recorded.method !== 'POST' || recorded.path !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Unknown path ${recorded.path}` } }));
      return;
    }
    const reply = typeof current === 'function' ? await current(recorded) : current;
    await wait(reply.headerDelayMs, res);
    if (res.destroyed) return;

    if (reply.json !== undefined) {
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.json));
      return;
    }
    res.writeHead(reply.status ?? 200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      ...reply.headers,
    });
    res.flushHeaders();
    for (const event of reply.sse ?? []) {
      await wait(reply.chunkDelayMs, res);
      if (res.destroyed) return;
      res.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);
    }
    if (!reply.hang) res.end();
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    setScript(next) {
      current = next;
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
