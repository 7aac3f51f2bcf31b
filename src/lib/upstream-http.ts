/**
 * Calling a model provider over HTTP, as both model clients do (chat's `openai` provider and the
 * runs' OpenAI adapter): the request headers, a time limit on each wait for the upstream, the
 * messages for a provider that is silent or unreachable, and upstream text made safe to show.
 */
import { onAbort } from './on-abort.js';
import { redactSecrets } from './redact.js';

/** How much of an upstream's text is read, and how much of it is shown. */
const UPSTREAM_TEXT_SCAN = 4000;
const UPSTREAM_TEXT_SHOWN = 300;

export interface UpstreamCredentials {
  apiKey: string;
  /** Sent as `OpenAI-Organization` when set (the integration's `openai_organization`). */
  organization?: string | null;
}

/** JSON request headers, the key as a bearer token and the organization when there is one. */
export function upstreamHeaders(credentials: UpstreamCredentials, extra: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...extra };
  if (credentials.apiKey) headers.authorization = `Bearer ${credentials.apiKey}`;
  if (credentials.organization) headers['openai-organization'] = credentials.organization;
  return headers;
}

/**
 * A time limit on each wait for the upstream (its response headers, each next piece of a stream),
 * not on the whole call: the clock runs only while we wait, never while our consumer is busy.
 * When a wait runs out, `abort` is called and `timedOut` turns true.
 */
export class UpstreamDeadline {
  timedOut = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly timeoutMs: number,
    private readonly abort: () => void,
  ) {}

  async wait<T>(promise: Promise<T>): Promise<T> {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.abort();
    }, this.timeoutMs);
    try {
      return await promise;
    } finally {
      clearTimeout(this.timer);
    }
  }

  /** What a call that ran out of time answers. */
  get message(): string {
    return `The model provider did not respond within ${this.timeoutMs} ms.`;
  }
}

/**
 * Aborts `controller` when `signal` aborts, until the returned `unfollow` is called; at once if it
 * already has. For a long-lived signal (the runtime's shutdown) followed by every model call: one
 * listener per signal however many calls follow it (onAbort). Not AbortSignal.any: on Node 20
 * every signal it makes stays in the long-lived signal's set of dependants for good.
 */
export function followAbort(signal: AbortSignal, controller: AbortController): () => void {
  if (!signal.aborted) return onAbort(signal, () => controller.abort(signal.reason));
  controller.abort(signal.reason);
  return () => {};
}

/** What a call whose connection failed answers, with the system's error code when there is one. */
export function unreachableMessage(error: unknown): string {
  const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return `The model provider could not be reached${typeof code === 'string' ? ` (${code})` : ''}.`;
}

/**
 * Text from an upstream (an error message or code) as it may be stored and shown to API callers:
 * every recognisable form of the secrets removed (src/lib/redact.ts), control and format
 * characters flattened to spaces, at most 300 characters; '' when nothing is left. Upstream text
 * is never shown unfiltered: run errors are readable with workspace keys.
 */
export function safeUpstreamText(text: unknown, secrets: readonly (string | null | undefined)[]): string {
  if (typeof text !== 'string') return '';
  // Redact before cutting, so a cut never leaves a key's piece too short to be recognised in view.
  // A word cut at the scan limit is dropped: a short piece of a key is not recognisable.
  const scanned = text.length > UPSTREAM_TEXT_SCAN ? text.slice(0, UPSTREAM_TEXT_SCAN).replace(/[^\s]+$/u, '') : text;
  const flat = scanned.replace(/[\p{Cc}\p{Cf}]+/gu, ' ').trim();
  if (flat === '') return '';
  const safe = redactSecrets(flat, secrets);
  return safe.length > UPSTREAM_TEXT_SHOWN ? `${safe.slice(0, UPSTREAM_TEXT_SHOWN)}…` : safe;
}
