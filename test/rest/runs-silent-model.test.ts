/**
 * When the executor writes a run's start: a model that answers at once has the start written with
 * its answer, a silent one shows the run `in_progress` (and its event) while it is still silent.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ModelAdapter, ModelEvent } from '../../src/modules/runs/models/model.js';
import { runExecutor } from '../../src/modules/runs/executor.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BETA, names, ok, parseSse, startRun, useLocalModel, waitFor } from '../helpers/run-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A model that says nothing until `speak()`, then answers in one delta. */
function silentModel(): { adapter: ModelAdapter; speak: () => void } {
  let speak!: () => void;
  const spoken = new Promise<void>((resolve) => (speak = resolve));
  const adapter: ModelAdapter = {
    async *stream(): AsyncIterable<ModelEvent> {
      await spoken;
      yield { type: 'text_delta', text: 'at last' };
      yield { type: 'done', finishReason: 'stop', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } };
    },
  };
  return { adapter, speak };
}

it('a silent model: the run shows in_progress with its event before any output, then completes', async () => {
  const model = silentModel();
  useLocalModel(t, () => model.adapter);
  const { thread, run } = await startRun(t, 'hello');
  const started = await waitFor(t, thread.id, run.id, ['in_progress'], 5_000);
  expect(started.started_at).not.toBeNull();
  const messages = await ok(t, 'GET', `/v1/threads/${thread.id}/messages`, undefined, BETA);
  expect(messages.data.map((m: { role: string }) => m.role)).toEqual(['user']);

  model.speak();
  await runExecutor(t.app.runtime).whenIdle();
  const done = await waitFor(t, thread.id, run.id, ['completed'], 5_000);
  expect(done.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2 });
  const log = await t.request('GET', `/v1/threads/${thread.id}/runs/${run.id}/events`, { headers: BETA });
  expect(names(parseSse(log.text)).slice(0, 4)).toEqual(['thread.run.created', 'thread.run.queued', 'thread.run.in_progress', 'thread.run.step.created']);
});
