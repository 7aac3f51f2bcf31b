/**
 * The `openai` provider for chat completions and embeddings: any OpenAI-compatible base URL. The
 * caller's body goes upstream as it came (only `model` loses its `@<virtual-key>/` prefix, and a
 * stream always asks for usage); upstream errors come back with the upstream's status and
 * message, the key removed. Retries (429, 5xx, connection errors) happen only before the first
 * byte of an answer, so nothing a caller saw is ever repeated.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { followAbort, safeUpstreamText, unreachableMessage, UpstreamDeadline, upstreamHeaders } from '../../lib/upstream-http.js';
import { sseData } from '../runs/models/openai-chat.js';
import type { WireBody } from './chat-request.js';
import type { ModelProvider, ProviderCall } from './provider.js';
import { UpstreamError } from './upstream-error.js';
import { postUpstream, type UpstreamResponse } from '../../lib/upstream-post.js';

export interface OpenAIProviderOptions {
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Sent as `OpenAI-Organization` when set (the integration's `openai_organization`). */
  organization?: string | null;
  /** Longest wait for the response headers, and for each next piece of a stream. */
  timeoutMs: number;
  retries: number;
  backoffMs: number;
}

const MAX_RETRY_AFTER_MS = 10_000;

export class OpenAIProvider implements ModelProvider {
  /** The base URL without its trailing slashes, and the request headers: the same for every call. */
  private readonly base: string;
  private readonly headers: Record<string, string>;

  constructor(private readonly options: OpenAIProviderOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.headers = upstreamHeaders(options);
  }

  complete(call: ProviderCall): Promise<WireBody> {
    return this.json('/chat/completions', call);
  }

  async stream(call: ProviderCall): Promise<AsyncIterable<WireBody>> {
    const options = typeof call.body.stream_options === 'object' && call.body.stream_options !== null ? call.body.stream_options : {};
    const body = { ...call.body, model: call.model, stream: true, stream_options: { ...options, include_usage: true } };
    const { response, waitFor, release, finished } = await this.open('/chat/completions', body, call.signal);
    if (!(response.header('content-type') ?? '').includes('text/event-stream')) {
      release();
      throw new UpstreamError(502, 'The model provider did not answer with an event stream.', 'upstream_error');
    }
    return upstreamChunks(response, waitFor, release, finished, this.options.apiKey);
  }

  embed(call: ProviderCall): Promise<WireBody> {
    return this.json('/embeddings', call);
  }

  /** POSTs the caller's body (the upstream model named) and answers the upstream's JSON object. */
  private async json(path: string, call: ProviderCall): Promise<WireBody> {
    const { response, waitFor, release, finished } = await this.open(path, { ...call.body, model: call.model }, call.signal);
    let text: string;
    try {
      text = await waitFor(response.text());
    } catch (error) {
      release();
      throw error;
    }
    // A body read to its end needs no release (an abort there only costs: a DOMException each).
    finished();
    try {
      const body = JSON.parse(text) as unknown;
      if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as WireBody;
    } catch {
      // below
    }
    throw new UpstreamError(502, 'The model provider answered with a body that is not a JSON object.', 'upstream_error');
  }

  /**
   * POSTs to the upstream until it answers 2xx (retrying 429/5xx/connection errors with backoff),
   * or throws its error. `waitFor` bounds each later wait on the answer by the timeout; `release`
   * ends the connection, `finished` is for an answer read to its end (nothing to end; the caller's
   * signal no longer followed).
   */
  private async open(path: string, body: WireBody, signal: AbortSignal) {
    const { apiKey, timeoutMs, retries, backoffMs } = this.options;
    const { headers } = this;
    const url = `${this.base}${path}`;
    const payload = JSON.stringify(body);

    for (let attempt = 0; ; attempt++) {
      const controller = new AbortController();
      // The caller's signal is long-lived (shared by every call in flight): followed, not linked.
      const unfollow = followAbort(signal, controller);
      const deadline = new UpstreamDeadline(timeoutMs, () => controller.abort());
      const waitFor = async <T>(promise: Promise<T>): Promise<T> => {
        try {
          return await deadline.wait(promise);
        } catch (error) {
          if (deadline.timedOut) throw new UpstreamError(504, deadline.message, 'upstream_timeout');
          throw error;
        }
      };
      const release = () => {
        unfollow();
        controller.abort();
      };
      let retryAfterMs: number | null = null;
      try {
        const response = await waitFor(postUpstream(url, headers, payload, controller.signal));
        if (response.status >= 200 && response.status < 300) return { response, waitFor, release, finished: unfollow };
        if (!retryable(response.status) || attempt >= retries) {
          const error = await upstreamError(response, apiKey, waitFor);
          release();
          throw error;
        }
        retryAfterMs = retryAfter(response.header('retry-after'));
        release();
      } catch (error) {
        release();
        if (signal.aborted) throw signal.reason ?? error;
        if (error instanceof UpstreamError && (error.code !== 'upstream_timeout' || attempt >= retries)) throw error;
        if (!(error instanceof UpstreamError) && attempt >= retries) throw new UpstreamError(502, unreachableMessage(error), 'upstream_unreachable');
      }
      await sleep(retryAfterMs ?? backoffMs * 2 ** attempt, undefined, { signal });
    }
  }
}

const retryable = (status: number) => status === 429 || status >= 500;

function retryAfter(header: string | null): number | null {
  if (!header) return null;
  const seconds = Number(header);
  if (!Number.isFinite(seconds) || seconds < 0) return null;
  return Math.min(seconds * 1000, MAX_RETRY_AFTER_MS);
}

/** The upstream's status and message (its `error.message`, or its text), made safe to show. */
async function upstreamError(response: UpstreamResponse, apiKey: string, waitFor: <T>(p: Promise<T>) => Promise<T>): Promise<UpstreamError> {
  let message = '';
  let code: string | null = null;
  try {
    const text = await waitFor(response.text());
    try {
      const parsed = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } | string; message?: unknown };
      const error = parsed.error;
      if (typeof error === 'string') message = error;
      else if (error && typeof error.message === 'string') {
        message = error.message;
        if (typeof error.code === 'string') code = error.code;
      } else if (typeof parsed.message === 'string') message = parsed.message;
    } catch {
      message = text;
    }
  } catch {
    // No readable body: the status alone speaks.
  }
  message = safeUpstreamText(message, [apiKey]);
  const safeCode = safeUpstreamText(code, [apiKey]);
  const headers: Record<string, string> = {};
  const after = response.header('retry-after');
  if (after) headers['retry-after'] = after;
  return new UpstreamError(
    response.status,
    message ? `The model provider answered HTTP ${response.status}: ${message}` : `The model provider answered HTTP ${response.status}.`,
    safeCode || 'upstream_error',
    headers,
  );
}

/**
 * The chunks of an upstream's event stream (`stream`'s answer), ending the call with the stream.
 * One generator function for every call, not a generator closure made per call: V8 gives each
 * generator closure its own prototype and initial map, and that map is made in the old generation
 * pointing back at the closure, so everything the call's closures reach (the response, the
 * request's context) outlived every young-generation collection and was copied to the old
 * generation, to be freed only by a full collection.
 */
async function* upstreamChunks(
  response: UpstreamResponse,
  waitFor: <T>(promise: Promise<T>) => Promise<T>,
  release: () => void,
  finished: () => void,
  secret: string,
): AsyncGenerator<WireBody> {
  let done = false;
  try {
    for await (const data of sseData(() => waitFor(response.read()))) {
      if (data === '[DONE]') {
        // The answer is complete: the connection can serve the next call once its end arrives.
        done = true;
        response.drain();
        return;
      }
      let chunk: WireBody;
      try {
        chunk = JSON.parse(data) as WireBody;
      } catch {
        throw new UpstreamError(502, 'The model provider sent a malformed stream (a chunk is not JSON).', 'upstream_error');
      }
      const error = chunk.error as { message?: unknown } | undefined;
      if (error && typeof error === 'object') {
        throw new UpstreamError(502, `The model provider reported an error: ${safeUpstreamText(String(error.message ?? ''), [secret])}`, 'upstream_error');
      }
      yield chunk;
    }
  } finally {
    if (done) finished();
    else release();
  }
}
