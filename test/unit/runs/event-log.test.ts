import { describe, expect, it } from 'vitest';
import { RunHooks } from '../../../src/modules/runs/admission.js';
import { endsRun, statusOfEvent } from '../../../src/modules/runs/event-log.js';
import { nextOrdinal } from '../../../src/modules/runs/ordinal.js';
import { listOf, normalisePage } from '../../../src/modules/runs/pagination.js';
import { messageDelta } from '../../../src/modules/runs/wire.js';

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
