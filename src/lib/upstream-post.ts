/**
 * One POST to a model provider over node:http(s), with keep-alive connections, for both model
 * clients (chat's `openai` provider and the runs' OpenAI adapter). Not `fetch`: undici's fetch
 * (the WHATWG algorithm, web streams, per-call signals and exceptions) cost about 1 ms of CPU per
 * call in `npm run bench`'s chat figures, four to five times this, on a path whose whole goal is
 * to add little to the upstream's time. Only what those clients read is kept: the status, a
 * header, the whole text, or the body piece by piece.
 */
import http, { type IncomingMessage, type RequestOptions } from 'node:http';
import https from 'node:https';
import { setBounded } from './bounded-map.js';

/** Each protocol's client, with connections reused across calls (fetch did the same). */
const transports: Record<string, { client: typeof http | typeof https; agent: http.Agent }> = {
  'http:': { client: http, agent: new http.Agent({ keepAlive: true }) },
  'https:': { client: https, agent: new https.Agent({ keepAlive: true }) },
};

/** A URL's client and request options (everything but the headers), parsed once per URL. */
interface Target {
  client: typeof http | typeof https;
  options: RequestOptions;
}

/** Parsed targets by URL: a provider calls the same few URLs again and again (a URL per integration and route). */
const targets = new Map<string, Target>();
const TARGETS_LIMIT = 1_000;

function targetOf(url: string): Target {
  const known = targets.get(url);
  if (known) return known;
  const parsed = new URL(url);
  const transport = Object.hasOwn(transports, parsed.protocol) ? transports[parsed.protocol] : null;
  if (!transport) throw new Error(`Unsupported protocol ${parsed.protocol}`);
  const options: RequestOptions = {
    method: 'POST',
    agent: transport.agent,
    protocol: parsed.protocol,
    // An IPv6 literal comes bracketed from URL; the request options want it bare.
    hostname: parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname,
    port: parsed.port === '' ? undefined : Number(parsed.port),
    path: `${parsed.pathname}${parsed.search}`,
    ...(parsed.username || parsed.password ? { auth: `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}` } : {}),
  };
  const target = { client: transport.client, options };
  setBounded(targets, url, target, TARGETS_LIMIT);
  return target;
}

export interface UpstreamResponse {
  status: number;
  header(name: string): string | null;
  /** The whole body as UTF-8. */
  text(): Promise<string>;
  /** The next piece of the body (`done` at its end), for streams. */
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  /**
   * Reads what is left of a body whose content is complete (a stream past `[DONE]`) in the
   * background, so the connection goes back to the agent for the next call; one that has not
   * ended within DRAIN_MS is closed.
   */
  drain(): void;
}

const DRAIN_MS = 5_000;

/**
 * Sends `payload` and resolves with the response once its headers arrived. `signal` aborts the
 * call at any point (the request, or the body still being read); a connection that fails rejects
 * with an error whose `cause` is the system's (its `code` read by `unreachableMessage`).
 */
export function postUpstream(url: string, headers: Record<string, string>, payload: string, signal: AbortSignal): Promise<UpstreamResponse> {
  let target: Target;
  try {
    target = targetOf(url);
  } catch (error) {
    return Promise.reject(error);
  }
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let answer: IncomingMessage | null = null;
    // Object.assign, not `{ ...options, headers }` (CONTRIBUTING: objects made per request).
    const request = target.client.request(
      Object.assign({}, target.options, { headers: Object.assign({}, headers, { 'content-length': String(Buffer.byteLength(payload)) }) }),
      (response) => {
        answer = response;
        resolve(responseOf(response));
      },
    );
    // The signal is followed only until the call is over ('close'): node's own `signal` option
    // would also destroy a connection already handed back to the agent for the next call. Once
    // answered, the body is dropped without an error (a read in progress fails, and no one else
    // is told: the caller let go of it on purpose or its deadline passed).
    const abort = () => (answer ? answer.destroy() : request.destroy(signal.reason));
    signal.addEventListener('abort', abort, { once: true });
    request.once('close', () => signal.removeEventListener('abort', abort));
    request.on('error', (error) => reject(signal.aborted ? error : new Error('The upstream could not be reached.', { cause: error })));
    request.end(payload);
  });
}

function responseOf(response: IncomingMessage): UpstreamResponse {
  // Made only for a body read piece by piece: a stream's async iterator (an async generator, a
  // promise per piece) costs more than reading a whole body by its events.
  let iterator: AsyncIterator<Buffer> | null = null;
  const pieces = () => (iterator ??= response[Symbol.asyncIterator]() as AsyncIterator<Buffer>);
  return {
    status: response.statusCode ?? 0,
    header(name) {
      const value = response.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : (value ?? null);
    },
    text() {
      return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        response.once('error', reject);
        // Destroyed without an error (the call aborted): the body will not end.
        response.once('close', () => {
          if (!response.complete) reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
        });
      });
    },
    async read() {
      const next = await pieces().next();
      return next.done ? { done: true, value: undefined } : { done: false, value: next.value };
    },
    drain() {
      if (response.complete) return;
      const timer = setTimeout(() => response.destroy(), DRAIN_MS).unref();
      void (async () => {
        for (let next = await pieces().next(); !next.done; next = await pieces().next());
      })()
        .catch(() => undefined)
        .finally(() => clearTimeout(timer));
    },
  };
}
