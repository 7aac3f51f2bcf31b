/**
 * What one run costs the database: every statement of `POST /v1/threads/runs` on the offline
 * `local` model, from the request to the settled run, counted through the runtime's onQuery hook
 * (a count, not a timing), after a first run as on a running gateway. The bounds are what the
 * code reaches today, so a change that adds statements fails here; the goal is 15 statements, 5 of
 * them in the request (`npm run bench` prints the count beside it).
 */
import { expect, it } from 'vitest';
import { runExecutor } from '../../../src/modules/runs/executor.js';
import { H, names, parseSse } from '../../helpers/run-fixtures.js';
import { postShortRun, useStatementRecorder } from '../../helpers/statement-recorder.js';

const recorder = useStatementRecorder();

async function oneRun(assistantId: string) {
  const response = await postShortRun(recorder.t, assistantId);
  expect(response.status).toBe(200);
  return response.body;
}

/** What a run's own statements are: transaction control and the request log's shared batches left out. */
function counted(all: string[]): string[] {
  // The request log is written in timed batches shared by many requests (request-log.writer.ts):
  // a batch that happens to fall inside this run is not the run's own statement.
  return all.filter((sql) => !/^\s*(begin|commit|rollback|savepoint|release)/i.test(sql) && !/^\s*insert into\W+request_logs/i.test(sql));
}

it('a run on local: one transaction in the request, one for the whole execution, at most 11 statements', async () => {
  const assistant = (await recorder.t.request('POST', '/v1/assistants', { body: { model: 'local-test' }, headers: H })).body;
  await oneRun(assistant.id);
  await runExecutor(recorder.t.app.runtime).whenIdle();

  const recording = recorder.start();
  const run = await oneRun(assistant.id);
  const inRequest = recording.length;
  await runExecutor(recorder.t.app.runtime).whenIdle();
  const all = recorder.stop();

  const settled = await recorder.t.request('GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, { headers: H });
  expect(settled.body.status).toBe('completed');
  const transactions = all.filter((sql) => /^\s*begin/i.test(sql)).length;
  const own = counted(all);
  // Instances sharing a database (PostgreSQL) claim a run's lease before executing it; alone (SQLite) no claim is needed.
  const lease = recorder.t.app.runtime.instances.alone ? 0 : 1;
  expect(transactions).toBe(2);
  expect(own.length, own.join('\n')).toBeLessThanOrEqual(11 + lease);
  // The executor starts as soon as the run is queued, so on PostgreSQL its lease claim may land
  // before the client has read the answer.
  const request = counted(all.slice(0, inRequest));
  expect(request.length, request.join('\n')).toBeLessThanOrEqual(5 + lease);
});

it('a streamed run: its stream reads the log at most once (never alone on SQLite), and neither the thread nor the run the request has just written', async () => {
  const assistant = (await recorder.t.request('POST', '/v1/assistants', { body: { model: 'local-test' }, headers: H })).body;
  await postShortRun(recorder.t, assistant.id, { stream: true });
  await runExecutor(recorder.t.app.runtime).whenIdle();

  recorder.start();
  const response = await postShortRun(recorder.t, assistant.id, { stream: true });
  await runExecutor(recorder.t.app.runtime).whenIdle();
  const all = recorder.stop();

  expect(response.status).toBe(200);
  expect(names(parseSse(response.text)).slice(-2)).toEqual(['thread.run.completed', 'done']);
  const reads = all.filter((sql) => /^\s*select/i.test(sql));
  // Alone on its database (SQLite) the process has published the whole log of a run it created:
  // the stream takes it from there (event-log.ts publishedEvents). Sharing it, the log is read once.
  const { alone } = recorder.t.app.runtime.instances;
  expect(reads.filter((sql) => /\brun_events\b/.test(sql)), all.join('\n')).toHaveLength(alone ? 0 : 1);
  expect(reads.filter((sql) => /\b(threads|runs)\b/.test(sql)), all.join('\n')).toEqual([]);
  const own = counted(all);
  const lease = alone ? 0 : 1;
  // The run's own statements and, sharing the database, the one read of its log.
  expect(own.length, own.join('\n')).toBeLessThanOrEqual(11 + (alone ? 0 : 1) + lease);
});

it('a run written back by the execution keeps the columns fixed at its creation out of the UPDATE: their indexes are not rewritten', async () => {
  const assistant = (await recorder.t.request('POST', '/v1/assistants', { body: { model: 'local-test' }, headers: H })).body;
  recorder.start();
  const run = await oneRun(assistant.id);
  await runExecutor(recorder.t.app.runtime).whenIdle();
  const all = recorder.stop();

  const settled = await recorder.t.request('GET', `/v1/threads/${run.thread_id}/runs/${run.id}`, { headers: H });
  expect(settled.body.status).toBe('completed');
  // The full write of the run its transaction moved (RunTx.writeHeld), not the conditional move itself.
  const writes = all.filter((sql) => /^\s*update\W+runs\W+set\W+\w+\W*=\s*(\?|\$\d+)\s*,/i.test(sql));
  expect(writes.length, all.join('\n')).toBeGreaterThan(0);
  for (const sql of writes) {
    const assigned = sql.slice(0, sql.search(/\swhere\s/i));
    expect(assigned).toMatch(/\bstatus\b/);
    for (const fixed of ['organisation_id', 'workspace_id', 'thread_id', 'assistant_id', 'ordinal', 'created_at']) expect(assigned).not.toMatch(new RegExp(`\\b${fixed}\\b`));
  }
});
