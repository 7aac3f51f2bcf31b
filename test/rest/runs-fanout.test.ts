/**
 * Many clients following one run's events (GET /v1/threads/{id}/runs/{id}/events): each of 200
 * gets the run's whole log, in order, with no gap and no duplicate; each live event is
 * serialised once for all of them, not once per client; all followers share one pubsub listener;
 * and a client that reads nothing while the run emits far more events than its stream holds
 * (STREAM_HIGH_WATER) is paused instead of queueing them and, when it reads at last, is caught up
 * from the log with the same events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalModel } from '../../src/modules/runs/models/local-model.js';
import { runEventsTopic } from '../../src/modules/runs/event-log.js';
import { STREAM_HIGH_WATER } from '../../src/http/event-stream.js';
import { runListeners } from '../../src/modules/runs/run-follower.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { BETA, assistant, ok, slowLocal, thread, useLocalModel, waitFor } from '../helpers/run-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  // No keep-alive comment in the middle of the compared streams.
  t = await createTestApp({ SSE_KEEPALIVE_MS: 600_000 });
});
afterAll(() => t.close());

const eventsRequest = (threadId: string, runId: string) =>
  t.app.fetch(new Request(`http://gatehouse.test/v1/threads/${threadId}/runs/${runId}/events`, { headers: { ...BETA, 'x-gateway-api-key': t.key } }));

describe('one run followed by many clients', () => {
  it('200 followers get every event in order; live events are serialised once; a stalled follower is bounded and caught up', async () => {
    // ~310 deltas: more than a follower may queue.
    slowLocal(t, { delayMs: 1, tokensPerDelta: 1 });
    // Counts serialisations per delta object (a plain wrapper: a spy would record every call).
    const stringified = new Map<object, number>();
    const realStringify = JSON.stringify;
    JSON.stringify = function (value: unknown, ...rest: unknown[]) {
      if (typeof value === 'object' && value !== null && (value as { object?: unknown }).object === 'thread.message.delta') {
        stringified.set(value, (stringified.get(value) ?? 0) + 1);
      }
      return (realStringify as (...args: unknown[]) => string)(value, ...rest);
    } as typeof JSON.stringify;
    const pubsub = t.app.runtime.pubsub;
    const publish = pubsub.publish;
    try {
      const words = Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ');
      const a = await assistant(t, { tools: [] });
      const th = await thread(t, words);
      const run = await ok(t, 'POST', `/v1/threads/${th.id}/runs`, { assistant_id: a.id });

      let maxListeners = 0;
      pubsub.publish = (topic, payload) => {
        publish.call(pubsub, topic, payload);
        if (topic === runEventsTopic(run.id)) maxListeners = Math.max(maxListeners, pubsub.listenerCount(topic));
      };

      const stalled = await eventsRequest(th.id, run.id);
      const followers = await Promise.all(Array.from({ length: 200 }, () => eventsRequest(th.id, run.id)));
      const texts = await Promise.all(followers.map((response) => response.text()));
      const done = await waitFor(t, th.id, run.id, ['completed', 'failed']);
      expect(done.status).toBe('completed');

      const whole = (await t.request('GET', `/v1/threads/${th.id}/runs/${run.id}/events`, { headers: BETA })).text;
      const ids = [...whole.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      expect(ids.length).toBeGreaterThan(STREAM_HIGH_WATER * 8);
      expect(ids).toEqual(ids.map((_, i) => i + 1));
      expect(whole.endsWith('event: done\ndata: [DONE]\n\n')).toBe(true);
      for (const text of texts) expect(text).toBe(whole);

      // 201 followers, one pubsub listener.
      expect(maxListeners).toBe(1);
      // The stalled follower stopped at its stream's bound (paused, still following), then reads the rest.
      expect(runListeners(pubsub).count(run.id)).toEqual({ followers: 1, paused: 1 });
      expect(await stalled.text()).toBe(whole);
      expect(runListeners(pubsub).count(run.id)).toEqual({ followers: 0, paused: 0 });
      expect(pubsub.listenerCount(runEventsTopic(run.id))).toBe(0);

      // A live delta is serialised a fixed number of times (writing the log, the SSE frame all
      // followers share), never once per follower.
      expect(stringified.size).toBeGreaterThan(STREAM_HIGH_WATER * 8);
      expect(Math.max(...stringified.values())).toBeLessThanOrEqual(3);
    } finally {
      JSON.stringify = realStringify;
      pubsub.publish = publish;
      useLocalModel(t, () => new LocalModel());
    }
  });
});
