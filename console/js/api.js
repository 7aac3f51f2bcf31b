// The console's only way to the gateway: GraphQL at /graphql and subscriptions over graphql-sse
// (distinct connections mode) at /graphql/stream, with the API key from this tab's sessionStorage.

const KEY_ITEM = 'gatehouse.apiKey';

export const session = {
  get key() {
    return sessionStorage.getItem(KEY_ITEM);
  },
  signIn(key) {
    sessionStorage.setItem(KEY_ITEM, key);
  },
  signOut() {
    sessionStorage.removeItem(KEY_ITEM);
  },
};

export class ApiError extends Error {
  constructor(message, code, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

function headers(extra = {}) {
  return { 'content-type': 'application/json', 'x-gateway-api-key': session.key ?? '', ...extra };
}

function firstError(body, status) {
  const error = body?.errors?.[0] ?? body?.error;
  return new ApiError(error?.message ?? `The gateway answered ${status}.`, error?.extensions?.code ?? error?.code, error?.extensions?.status ?? status);
}

/** One GraphQL operation; its data, or an ApiError with the gateway's message. */
export async function gql(query, variables = {}) {
  const response = await fetch('/graphql', { method: 'POST', headers: headers(), body: JSON.stringify({ query, variables }) });
  let body;
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`The gateway answered ${response.status} without JSON.`, null, response.status);
  }
  if (body.errors?.length || !body.data) throw firstError(body, response.status);
  return body.data;
}

/**
 * A subscription: onNext gets each result's data until the server completes the stream or
 * `signal` aborts. Resolves when the stream ends; rejects with the gateway's error.
 */
export async function subscribe(query, variables, onNext, signal) {
  const response = await fetch('/graphql/stream', {
    method: 'POST',
    headers: headers({ accept: 'text/event-stream' }),
    body: JSON.stringify({ query, variables }),
    signal,
  });
  if (!response.ok || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
    throw firstError(await response.json().catch(() => null), response.status);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const message = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (message.event === 'complete') return;
        if (message.event === 'next' && message.data) {
          const result = JSON.parse(message.data);
          if (result.errors?.length) throw firstError(result, 200);
          onNext(result.data);
        }
      }
    }
  } catch (error) {
    if (signal?.aborted) return;
    throw error;
  } finally {
    reader.cancel().catch(() => {});
  }
}

function parseEvent(block) {
  const message = { event: 'message', data: '' };
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') message.event = value;
    else if (field === 'data') message.data += (message.data ? '\n' : '') + value;
  }
  return message;
}
