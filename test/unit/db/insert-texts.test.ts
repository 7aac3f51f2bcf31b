import { afterEach, expect, it, vi } from 'vitest';
import { InsertTexts } from '../../../src/db/sql.js';

/*
 * Multi-row INSERT texts (src/db/sql.ts InsertTexts: the run path's row and event inserts, and the
 * batched inserts of bound-inserts.ts): the text for each row count, built once per count up to
 * the kept limit, so the same string finds its prepared statement every time.
 */

afterEach(() => {
  vi.restoreAllMocks();
});

it('writes one placeholder group per row', () => {
  const texts = new InsertTexts('run_events', ['run_id', 'sequence', 'data']);
  expect(texts.of(1)).toBe('insert into run_events (run_id, sequence, data) values (?, ?, ?)');
  expect(texts.of(3)).toBe('insert into run_events (run_id, sequence, data) values (?, ?, ?), (?, ?, ?), (?, ?, ?)');
});

it('builds the text of a row count once, up to the kept limit; longer ones each time', () => {
  const texts = new InsertTexts('t', ['a', 'b'], 2);
  const build = vi.spyOn(Array, 'from');
  expect(texts.of(2)).toBe('insert into t (a, b) values (?, ?), (?, ?)');
  expect(texts.of(2)).toBe('insert into t (a, b) values (?, ?), (?, ?)');
  expect(texts.of(1)).toBe('insert into t (a, b) values (?, ?)');
  expect(build).toHaveBeenCalledTimes(2);
  expect(texts.of(3)).toBe('insert into t (a, b) values (?, ?), (?, ?), (?, ?)');
  expect(texts.of(3)).toBe('insert into t (a, b) values (?, ?), (?, ?), (?, ?)');
  expect(build).toHaveBeenCalledTimes(4);
});
