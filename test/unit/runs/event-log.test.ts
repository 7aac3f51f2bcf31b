import { describe, expect, it } from 'vitest';
import { RunHooks } from '../../../src/modules/runs/admission.js';
import { endsRun, publishedEvents, publishEvents, startPublishedLog, statusOfEvent } from '../../../src/modules/runs/event-log.js';
import { nextOrdinal } from '../../../src/modules/runs/ordinal.js';
import { listOf, normalisePage } from '../../../src/modules/runs/pagination.js';
import { messageDelta } from '../../../src/modules/runs/wire.js';
import type { Runtime } from '../../../src/runtime.js';

describe('event names', () => {
  it('run events name a status; terminal ones end streams', () => {
    expect(statusOfEvent('thread.run.requires_action')).toBe('requires_action');
    expect(statusOfEvent('thread.run.created')).toBeNull();
    expect(statusOfEvent('thread.run.step.completed')).toBeNull();
    expect(statusOfEvent('thread.message.completed')).toBeNull();
    for (const status of ['completed', 'failed', 'cancelled', 'expired', 'incomplete']) expect(endsRun(`thread.run.${status}`)).toBe(true);
    for (const event of ['thread.run.requires_action', 'thread.run.cancelling', 'thread.run.step.completed', 'thread.run.step.failed']) expect(endsRun(event)).toBe(false);
  });
});

it('a text delta carries a numeric index and type text (the openai stream helper needs both)', () => {
  expect(messageDelta('msg_1', 'Hi')).toEqual({
    id: 'msg_1',
    object: 'thread.message.delta',
    delta: { content: [{ index: 0, type: 'text', text: { value: 'Hi', annotations: [] } }] },
  });
});

it('ordinals grow strictly, even within one millisecond', () => {
  const values = Array.from({ length: 1000 }, () => nextOrdinal());
  for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1]);
  expect(Number.isSafeInteger(values.at(-1)!)).toBe(true);
});

describe('pages', () => {
  it('defaults and bounds', () => {
    expect(normalisePage({})).toEqual({ limit: 20, order: 'desc', after: null, before: null });
    expect(() => normalisePage({ limit: 0 })).toThrow("Invalid 'limit': integer below minimum value. Expected a value >= 1, but got 0 instead.");
    expect(() => normalisePage({ order: 'up' })).toThrow("Invalid value: 'up'. Supported values are: 'asc' and 'desc'.");
  });

  it('list objects', () => {
    expect(listOf([], false)).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    expect(listOf([{ id: 'a' }, { id: 'b' }], true)).toMatchObject({ first_id: 'a', last_id: 'b', has_more: true });
  });
});

it('hooks register and unregister', () => {
  const hooks = new RunHooks();
  const check = () => {};
  const remove = hooks.addAdmissionCheck(check);
  expect(hooks.admissionChecks).toEqual([check]);
  remove();
  remove();
  expect(hooks.admissionChecks).toEqual([]);
});

describe('the published log of runs created here', () => {
  /** What publishEvents uses of a runtime: its singletons, pubsub and whether it is alone on its database. */
  function runtimeOf(alone: boolean): Runtime {
    const singletons = new Map<string, unknown>();
    return {
      instances: { alone },
      pubsub: { publish: () => undefined },
      singleton: <T>(key: string, make: () => T): T => (singletons.has(key) ? singletons.get(key) : singletons.set(key, make()).get(key)) as T,
    } as unknown as Runtime;
  }
  const records = (from: number, events: string[]) => events.map((event, i) => ({ sequence: from + i, event, data: { i } }));

  it('alone: kept from the run’s creation, in order, until its end', () => {
    const runtime = runtimeOf(true);
    startPublishedLog(runtime, 'run_1');
    expect(publishedEvents(runtime, 'run_1', 0)).toEqual([]);
    publishEvents(runtime, 'run_1', records(1, ['thread.run.created', 'thread.run.queued']));
    publishEvents(runtime, 'run_1', records(3, ['thread.run.in_progress', 'thread.message.delta']));
    expect(publishedEvents(runtime, 'run_1', 0)!.map((r) => r.sequence)).toEqual([1, 2, 3, 4]);
    expect(publishedEvents(runtime, 'run_1', 2)!.map((r) => r.event)).toEqual(['thread.run.in_progress', 'thread.message.delta']);
    expect(publishedEvents(runtime, 'run_1', 4)).toEqual([]);
    // Its end: followers read the log from the database (the terminal event is committed).
    publishEvents(runtime, 'run_1', records(5, ['thread.run.completed']));
    expect(publishedEvents(runtime, 'run_1', 0)).toBeNull();
  });

  it('published out of order: dropped, never taken up again (what came before would be missing)', () => {
    const runtime = runtimeOf(true);
    startPublishedLog(runtime, 'run_2');
    publishEvents(runtime, 'run_2', records(1, ['thread.run.created', 'thread.run.queued']));
    publishEvents(runtime, 'run_2', records(4, ['thread.run.cancelling']));
    expect(publishedEvents(runtime, 'run_2', 0)).toBeNull();
    publishEvents(runtime, 'run_2', records(3, ['thread.run.in_progress']));
    expect(publishedEvents(runtime, 'run_2', 0)).toBeNull();
  });

  it('a run not created here since start, or instances sharing the database: not kept', () => {
    const alone = runtimeOf(true);
    publishEvents(alone, 'run_3', records(1, ['thread.run.created']));
    expect(publishedEvents(alone, 'run_3', 0)).toBeNull();
    const shared = runtimeOf(false);
    startPublishedLog(shared, 'run_4');
    publishEvents(shared, 'run_4', records(1, ['thread.run.created']));
    expect(publishedEvents(shared, 'run_4', 0)).toBeNull();
  });
});
