import { createServer } from 'node:http';
import { listen } from './lib.js';

/**
 * The fake OpenAI-compatible upstream the chat and streamed benches put gateways in front of: it
 * answers `POST …/chat/completions` at once with a fixed five-word completion, or (`stream: true`)
 * the same words as chunks written one by one, a usage chunk and `[DONE]`.
 */
const USAGE = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
const chunk = (rest: object) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-4o-mini', ...rest })}\n\n`;
const CHUNKS = [
  ...['Hello', ' from', ' the', ' fake', ' upstream.'].map((content) => chunk({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })),
  chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
  chunk({ choices: [], usage: USAGE }),
  'data: [DONE]\n\n',
];
const COMPLETION = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the fake upstream.' }, logprobs: null, finish_reason: 'stop' }],
  usage: USAGE,
});

/** Starts the fake upstream on 127.0.0.1: its OpenAI base URL (`http://127.0.0.1:<port>/v1`), its streamed answer's chunk count, and close(). */
export async function startFakeUpstream(): Promise<{ url: string; chunks: number; close(): void }> {
  const upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (piece) => (raw += piece));
    req.on('end', () => {
      if (!(JSON.parse(raw) as { stream?: boolean }).stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(COMPLETION);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of CHUNKS) res.write(piece);
      res.end();
    });
  });
  return { url: `${await listen(upstream)}/v1`, chunks: CHUNKS.length, close: () => upstream.close() };
}
