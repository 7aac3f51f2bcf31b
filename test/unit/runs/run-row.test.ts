/**
 * A run moved by a transaction is held as a plain object converted from the row the conditional
 * UPDATE returns (run-store.ts runOfRow) and written back once when the transaction ends: the
 * object must be what the ORM would have hydrated from that row, property for property.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { boundSql } from '../../../src/db/sql.js';
import { runExecutor } from '../../../src/modules/runs/executor.js';
import { commitRun, runOfRow } from '../../../src/modules/runs/run-store.js';
import { RunSchema } from '../../../src/modules/runs/run.entity.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { H } from '../../helpers/run-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function settledRun(body: Record<string, unknown> = {}) {
  const assistant = (await t.request('POST', '/v1/assistants', { body: { model: 'local-test', instructions: 'be brief' }, headers: H })).body;
  const response = await t.request('POST', '/v1/threads/runs', { body: { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'hi' }] }, ...body }, headers: H });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  const run = response.body;
  await runExecutor(t.app.runtime).whenIdle();
  return run as { id: string; thread_id: string };
}

it('converts a returned run row exactly as the ORM hydrates it', async () => {
  const { id } = await settledRun({ metadata: { a: 'b' }, temperature: 0.5, max_completion_tokens: 300, parallel_tool_calls: false });
  const em = t.app.runtime.fork();
  const [row] = await boundSql<Record<string, unknown>[]>(em, 'select * from runs where id = ?', [id]);
  const converted = runOfRow(em, { ...row });
  const hydrated = em.map(RunSchema, { ...row });
  expect({ ...converted }).toEqual({ ...hydrated });
  expect(converted.createdAt).toBeInstanceOf(Date);
  expect(converted.parallelToolCalls).toBe(false);
  expect(converted.metadata).toEqual({ a: 'b' });
  expect(typeof converted.ordinal).toBe('number');
});

it('writes what a transaction changed on a run it moved, and a later read in the same EntityManager sees it', async () => {
  const { id, thread_id } = await settledRun();
  const em = t.app.runtime.fork();
  const before = await em.findOneOrFail(RunSchema, { id });
  expect(before.status).toBe('completed');
  await commitRun(t.app.runtime, em, async (rtx) => {
    await boundSql(rtx.tx, "update runs set status = 'in_progress' where id = ?", [id], 'run');
    const run = await rtx.move(id, 'in_progress', 'failed');
    run!.lastError = { code: 'server_error', message: 'gone' };
    run!.promptTokens += 5;
  });
  const after = await em.findOneOrFail(RunSchema, { id });
  expect(after).not.toBe(before);
  expect(after.status).toBe('failed');
  expect(after.lastError).toEqual({ code: 'server_error', message: 'gone' });
  expect(after.promptTokens).toBe(before.promptTokens + 5);
  expect(after.failedAt).toBeInstanceOf(Date);
  const wire = (await t.request('GET', `/v1/threads/${thread_id}/runs/${id}`, { headers: H })).body;
  expect(wire.status).toBe('failed');
  expect(wire.last_error).toEqual({ code: 'server_error', message: 'gone' });
});
