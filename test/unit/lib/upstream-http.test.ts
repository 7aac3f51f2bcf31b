import { describe, expect, it, vi } from 'vitest';
import { REDACTED } from '../../../src/lib/redact.js';
import { followAbort, safeUpstreamText, unreachableMessage, UpstreamDeadline, upstreamHeaders } from '../../../src/lib/upstream-http.js';

const KEY = 'sk-test-SECRET-0123456789';

describe('safeUpstreamText', () => {
  it('removes the key, flattens control characters and keeps at most 300 characters', () => {
    expect(safeUpstreamText(`bad key ${KEY}\n\u0000\u202Eagain`, [KEY])).toBe(`bad key ${REDACTED} again`);
    const long = safeUpstreamText('x'.repeat(1000), [KEY]);
    expect(long).toBe(`${'x'.repeat(300)}…`);
  });

  it('is empty for no text, blank text or a value that is not text', () => {
    expect(safeUpstreamText(undefined, [KEY])).toBe('');
    expect(safeUpstreamText(' \n\t', [KEY])).toBe('');
    expect(safeUpstreamText({ message: 'x' }, [KEY])).toBe('');
  });

  it('redacts a key that sits past the shown length before cutting (a cut never shows a piece of it)', () => {
    // Cut first, the text would show `sk-te`: too short a piece to be recognised as the key.
    const text = `${'word '.repeat(59)}${KEY} tail`;
    expect(safeUpstreamText(text, [KEY])).toBe(`${'word '.repeat(59)}[reda…`);
  });
});

describe('upstreamHeaders', () => {
  it('sends the key as a bearer token and the organization only when set', () => {
    expect(upstreamHeaders({ apiKey: KEY, organization: 'org-1' }, { accept: 'text/event-stream' })).toEqual({
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${KEY}`,
      'openai-organization': 'org-1',
    });
    expect(upstreamHeaders({ apiKey: '', organization: null })).toEqual({ 'content-type': 'application/json' });
  });
});

describe('UpstreamDeadline', () => {
  it('aborts a wait that runs out and says so; a wait that settles in time leaves it untouched', async () => {
    let aborted = 0;
    const deadline = new UpstreamDeadline(5, () => aborted++);
    expect(await deadline.wait(Promise.resolve('fast'))).toBe('fast');
    expect(deadline.timedOut).toBe(false);
    await deadline.wait(new Promise((resolve) => setTimeout(resolve, 200)));
    expect(deadline.timedOut).toBe(true);
    expect(aborted).toBe(1);
    expect(deadline.message).toBe('The model provider did not respond within 5 ms.');
  });
});

it('unreachableMessage names the system error code when the failure carries one', () => {
  expect(unreachableMessage(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }))).toBe('The model provider could not be reached (ECONNREFUSED).');
  expect(unreachableMessage(new Error('boom'))).toBe('The model provider could not be reached.');
});

describe('followAbort', () => {
  it('aborts every follower with the signal\'s reason, but none that stopped following', () => {
    const source = new AbortController();
    const [a, b] = [new AbortController(), new AbortController()];
    followAbort(source.signal, a);
    const unfollowB = followAbort(source.signal, b);
    unfollowB();
    source.abort(new Error('stop'));
    expect(a.signal.aborted).toBe(true);
    expect((a.signal.reason as Error).message).toBe('stop');
    expect(b.signal.aborted).toBe(false);
  });

  it('puts one listener on the signal however many follow it, and none once all stopped', () => {
    const source = new AbortController();
    const add = vi.spyOn(source.signal, 'addEventListener');
    const remove = vi.spyOn(source.signal, 'removeEventListener');
    const unfollows = Array.from({ length: 50 }, () => followAbort(source.signal, new AbortController()));
    expect(add).toHaveBeenCalledTimes(1);
    for (const unfollow of unfollows) unfollow();
    expect(remove).toHaveBeenCalledTimes(1);
  });

  it('aborts at once a follower of a signal already aborted', () => {
    const source = new AbortController();
    source.abort(new Error('gone'));
    const follower = new AbortController();
    followAbort(source.signal, follower);
    expect(follower.signal.aborted).toBe(true);
  });
});
