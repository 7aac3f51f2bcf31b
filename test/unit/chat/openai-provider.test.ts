import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OpenAIProvider } from '../../../src/modules/chat/openai-provider.js';
import { errorReply, startFakeOpenAI, textReply, type FakeOpenAI } from '../../helpers/fake-openai-server.js';

// The chat client shows upstream text as the runs' adapter does (src/lib/upstream-http.ts): the
// key removed, control characters flattened, at most 300 characters, in HTTP and mid-stream errors.

const API_KEY = 'sk-test-SECRET-0123456789';
let fake: FakeOpenAI;
let provider: OpenAIProvider;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  provider = new OpenAIProvider({ baseUrl: fake.url, apiKey: API_KEY, organization: 'org-7', timeoutMs: 5_000, retries: 0, backoffMs: 1 });
});
afterAll(() => fake.close());

const call = () => ({ body: { messages: [{ role: 'user', content: 'hi' }] }, model: 'gpt-4o-mini', maxCompletionTokens: null, signal: new AbortController().signal });
const noisy = `bad\u0000key ${API_KEY}\n${'x'.repeat(400)}`;
const shown = `bad key [redacted] ${'x'.repeat(300 - 'bad key [redacted] '.length)}…`;

async function failure(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

describe('chat openai provider: upstream text', () => {
  it('an HTTP error shows the upstream message made safe (and sends the organization)', async () => {
    fake.setScript(errorReply(400, noisy));
    const error = await failure(() => provider.complete(call()));
    expect(error.message).toBe(`The model provider answered HTTP 400: ${shown}`);
    expect(fake.requests.at(-1)!.headers['openai-organization']).toBe('org-7');
  });

  it('an error inside the stream is cut and flattened the same way', async () => {
    fake.setScript({ sse: [{ error: { message: noisy } }] });
    const error = await failure(async () => {
      for await (const _chunk of await provider.stream(call())) void _chunk;
    });
    expect(error.message).toBe(`The model provider reported an error: ${shown}`);
  });
});

describe('chat openai provider: waits and connections', () => {
  it('a stream that stalls after its first chunk times out (504) and closes the connection', async () => {
    const quick = new OpenAIProvider({ baseUrl: fake.url, apiKey: API_KEY, timeoutMs: 150, retries: 0, backoffMs: 1 });
    fake.setScript({ sse: [{ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hi' } }] }], hang: true });
    const seen: unknown[] = [];
    const error = await failure(async () => {
      for await (const chunk of await quick.stream(call())) seen.push(chunk);
    });
    expect(seen).toHaveLength(1);
    expect(error).toMatchObject({ status: 504, code: 'upstream_timeout' });
    await vi.waitFor(() => expect(fake.requests.at(-1)!.clientClosed).toBe(true));
  });

  it('a stream read to its end, then released, keeps its connection for the next calls', async () => {
    const before = fake.requests.length;
    for (let i = 0; i < 20; i++) {
      fake.setScript(textReply(['Hi', ' there']));
      const chunks = [];
      for await (const chunk of await provider.stream(call())) chunks.push(chunk);
      expect(chunks.length).toBeGreaterThan(2);
      fake.setScript({ json: { id: `x${i}`, object: 'chat.completion', choices: [] } });
      expect(await provider.complete(call())).toMatchObject({ id: `x${i}` });
    }
    // A call sent while the last stream's end is still arriving takes a second connection; the
    // two then serve every call (a stream closed at [DONE] would cost a connection each time).
    expect(new Set(fake.requests.slice(before).map((r) => r.remotePort)).size).toBeLessThanOrEqual(2);
  });

  it('streams share one generator function: no generator closure, with its own prototype and old-generation map, per call', async () => {
    // A generator closure made per call has its own prototype object and initial map (allocated in
    // the old generation, pointing back at the closure): young-generation collections then kept
    // everything the call reached alive until a full collection.
    const streams = [];
    for (let i = 0; i < 2; i++) {
      fake.setScript(textReply(['Hi']));
      const stream = await provider.stream(call());
      streams.push(stream);
      for await (const _chunk of stream) void _chunk;
    }
    expect(Object.getPrototypeOf(streams[0])).toBe(Object.getPrototypeOf(streams[1]));
  });

  it("the caller's long-lived signal keeps nothing of the calls it followed, and still aborts one in flight", async () => {
    // AbortSignal.any on Node 20 left every call's signal in the caller signal's dependants for good.
    const shutdown = new AbortController();
    const longLived = () => ({ ...call(), signal: shutdown.signal });
    fake.setScript({ json: { id: 'x', object: 'chat.completion', choices: [] } });
    for (let i = 0; i < 3; i++) await provider.complete(longLived());
    fake.setScript(textReply(['Hi']));
    for await (const _chunk of await provider.stream(longLived())) void _chunk;
    // Node adds the set (a symbol-keyed property) to a signal on its first AbortSignal.any.
    const dependants = Object.getOwnPropertySymbols(shutdown.signal).find((s) => s.description === 'kDependantSignals');
    expect(dependants === undefined ? 0 : ((shutdown.signal as unknown as Record<symbol, Set<unknown>>)[dependants]?.size ?? 0)).toBe(0);

    fake.setScript({ sse: [{ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hi' } }] }], hang: true });
    const seen: unknown[] = [];
    const reading = (async () => {
      for await (const chunk of await provider.stream(longLived())) {
        seen.push(chunk);
        shutdown.abort(new Error('shutting down'));
      }
    })();
    await expect(reading).rejects.toThrow();
    expect(seen).toHaveLength(1);
    await vi.waitFor(() => expect(fake.requests.at(-1)!.clientClosed).toBe(true));
  });

  it('calls one after another reuse the connection (keep-alive)', async () => {
    fake.setScript({ json: { id: 'x', object: 'chat.completion', choices: [] } });
    const before = fake.requests.length;
    for (let i = 0; i < 3; i++) expect(await provider.complete(call())).toMatchObject({ id: 'x' });
    const ports = new Set(fake.requests.slice(before).map((r) => r.remotePort));
    expect(ports.size).toBe(1);
  });
});
