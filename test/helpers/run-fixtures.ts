/**
 * Shared helpers for the runs tests (REST contract, e2e, GraphQL): wire headers, seeding an
 * assistant / thread / run through the REST API, waiting for a status, parsing SSE text, and
 * swapping the `local` model for a slow or failing one.
 */
import { LocalModel, type LocalModelOptions } from '../../src/modules/runs/models/local-model.js';
import type { ModelAdapter } from '../../src/modules/runs/models/model.js';
import { modelRegistry } from '../../src/modules/runs/models/registry.js';
import type { TestApp } from './app.js';

export const BETA = { 'OpenAI-Beta': 'assistants=v2' };
export const H = { ...BETA, 'x-gateway-virtual-key': 'local' };

export const weatherTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } };
export const timeTool = { type: 'function', function: { name: 'get_time' } };

export async function ok(t: TestApp, method: string, path: string, body?: unknown, headers: Record<string, string> = H) {
  const response = await t.request(method, path, { body, headers });
  if (response.status !== 200) throw new Error(`${method} ${path} → ${response.status} ${response.text}`);
  return response.body;
}

export async function assistant(t: TestApp, fields: Record<string, unknown> = {}) {
  return ok(t, 'POST', '/v1/assistants', { model: 'local-test', tools: [weatherTool, timeTool], ...fields });
}

export async function thread(t: TestApp, text?: string) {
  return ok(t, 'POST', '/v1/threads', text === undefined ? {} : { messages: [{ role: 'user', content: text }] });
}

/** An assistant, a thread with one user message, and a run on it (not awaited). */
export async function startRun(t: TestApp, text: string, runFields: Record<string, unknown> = {}, assistantFields: Record<string, unknown> = {}) {
  const a = await assistant(t, assistantFields);
  const th = await thread(t, text);
  const run = await ok(t, 'POST', `/v1/threads/${th.id}/runs`, { assistant_id: a.id, ...runFields });
  return { assistant: a, thread: th, run };
}

export async function getRun(t: TestApp, threadId: string, runId: string) {
  return ok(t, 'GET', `/v1/threads/${threadId}/runs/${runId}`, undefined, BETA);
}

/** Polls until the run has one of `statuses` (in-process, a few ms apart). */
export async function waitFor(t: TestApp, threadId: string, runId: string, statuses: string[], timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const run = await getRun(t, threadId, runId);
    if (statuses.includes(run.status)) return run;
    if (Date.now() > until) throw new Error(`run ${runId} stayed ${run.status}, wanted ${statuses.join('|')}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A run waiting for the output of one `get_weather` call. */
export async function waitingRun(t: TestApp, text = 'get_weather for Paris') {
  const started = await startRun(t, text);
  const run = await waitFor(t, started.thread.id, started.run.id, ['requires_action']);
  return { ...started, run, calls: run.required_action.submit_tool_outputs.tool_calls as { id: string }[] };
}

export interface SseMessage {
  event: string;
  id?: string;
  data: string;
}

/** Parses `text/event-stream` text; comment lines (`: ping`) are skipped. */
export function parseSse(text: string): SseMessage[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const message: SseMessage = { event: 'message', data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const [field, ...rest] = line.split(': ');
        const value = rest.join(': ');
        if (field === 'event') message.event = value;
        else if (field === 'id') message.id = value;
        else if (field === 'data') message.data = value;
      }
      return message;
    })
    .filter((m) => m.data !== '' || m.event !== 'message');
}

export const names = (messages: SseMessage[]) => messages.map((m) => m.event);

/** Replaces the `local` model of this app (slow deltas, a scripted failure…). */
export function useLocalModel(t: TestApp, make: () => ModelAdapter): void {
  modelRegistry(t.app.runtime).set('local', make);
}

export function slowLocal(t: TestApp, options: LocalModelOptions = { delayMs: 40, tokensPerDelta: 1 }): void {
  useLocalModel(t, () => new LocalModel(options));
}

export const TEXT_RUN_EVENTS = [
  'thread.run.step.created',
  'thread.run.step.in_progress',
  'thread.message.created',
  'thread.message.in_progress',
];
