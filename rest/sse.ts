import type { SseEvent } from './route.js';

export interface SseOptions {
  keepAliveMs: number;
  /** Aborted on shutdown: the stream ends after what it has written. */
  signal: AbortSignal;
  /** Turns a failure inside the stream into the `error` event's body. */
  describeError: (error: unknown) => { error: Record<string, unknown> };
  /** End with a bare `data: [DONE]` instead of `event: done` + `data: [DONE]`. */
  bareDone?: boolean;
}

const encoder = new TextEncoder();

/**
 * Writes events as text/event-stream: `event:`, `id:` and one compact `data:` line each;
 * `: ping` comments keep idle connections open (SDKs parse every data line as JSON, so pings
 * must be comments); `event: done` / `data: [DONE]` closes a stream that ran to its end.
 */
export function sseResponse(events: AsyncIterable<SseEvent>, options: SseOptions, headers: Record<string, string> = {}, status = 200): Response {
  const iterator = events[Symbol.asyncIterator]();
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  let onAbort: () => void = () => {};

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (text: string) => {
        if (!closed) controller.enqueue(encoder.encode(text));
      };
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(keepAlive);
        options.signal.removeEventListener('abort', onAbort);
        controller.close();
      };
      onAbort = () => {
        void iterator.return?.();
        close();
      };
      keepAlive = setInterval(() => write(': ping\n\n'), options.keepAliveMs);
      options.signal.addEventListener('abort', onAbort, { once: true });
      // A stream opened once shutdown has begun would never see the 'abort' event: end it now.
      if (options.signal.aborted) {
        onAbort();
        return;
      }
      void (async () => {
        try {
          for (;;) {
            const next = await iterator.next();
            if (next.done || closed) break;
            const { event, id, data } = next.value;
            write(`${event ? `event: ${event}\n` : ''}${id !== undefined ? `id: ${id}\n` : ''}data: ${data}\n\n`);
          }
          write(options.bareDone ? 'data: [DONE]\n\n' : 'event: done\ndata: [DONE]\n\n');
        } catch (error) {
          write(`event: error\ndata: ${JSON.stringify(options.describeError(error))}\n\n`);
        } finally {
          close();
        }
      })();
    },
    cancel() {
      // The client went away. What the stream reports (a run) goes on without it.
      closed = true;
      clearInterval(keepAlive);
      // The shutdown signal lives as long as the server: a listener left on it would keep this
      // stream (and its source) in memory after every client that disconnects.
      options.signal.removeEventListener('abort', onAbort);
      void iterator.return?.();
    },
  });

  return new Response(stream, {
    status,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    },
  });
}
