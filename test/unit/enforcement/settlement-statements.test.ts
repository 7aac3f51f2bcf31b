/**
 * What enforcement costs one run in statements (counted through the runtime's onQuery hook, after a
 * first run as on a running gateway): a run under a tokens policy settles in one transaction (the
 * reservation's claim, the admission record's settlement, the bucket), and a process alone on its
 * database does not read back the admission records it wrote. The bound is what the code reaches
 * today, so a change that adds statements fails here.
 */
import { expect, it } from 'vitest';
import { runExecutor } from '../../../src/modules/runs/executor.js';
import { usageEngine } from '../../../src/modules/usage/usage-engine.js';
import { allSettled, tokensPolicy } from '../../helpers/enforcement.js';
import { H } from '../../helpers/run-fixtures.js';
import { postShortRun, useStatementRecorder } from '../../helpers/statement-recorder.js';

const recorder = useStatementRecorder();

async function oneRun(assistantId: string) {
  expect((await postShortRun(recorder.t, assistantId)).status).toBe(200);
  await runExecutor(recorder.t.app.runtime).whenIdle();
  await usageEngine(recorder.t.app.runtime).settled();
  await allSettled(recorder.t);
}

it('a run under a tokens policy settles in one transaction, without reading its admission records back', async () => {
  await tokensPolicy(recorder.t, 1_000_000, 'Counted');
  const assistant = (await recorder.t.request('POST', '/v1/assistants', { body: { model: 'local-test' }, headers: H })).body;
  await oneRun(assistant.id);

  const recording = recorder.start();
  expect((await postShortRun(recorder.t, assistant.id)).status).toBe(200);
  await runExecutor(recorder.t.app.runtime).whenIdle();
  for (let i = 0; i < 300 && !recording.some((sql) => /update run_enforcement_records/i.test(sql)); i++) await new Promise((r) => setTimeout(r, 10));
  const all = recorder.stop();

  // Batched writes shared by many requests (request log, guardrail evaluations) are not the run's.
  const own = all.filter((sql) => !/^\s*insert into\W+(request_logs|guardrail_evaluations)/i.test(sql));
  const records = own.filter((sql) => /run_enforcement_records/i.test(sql));
  expect(records.filter((sql) => /^\s*insert/i.test(sql))).toHaveLength(1);
  expect(records.filter((sql) => /^\s*update/i.test(sql))).toHaveLength(1);
  const settlement = own.slice(own.findIndex((sql) => /update usage_reservations/i.test(sql)) - 1);
  expect(settlement[0]).toMatch(/^\s*begin/i);
  expect(settlement.slice(1, 4).some((sql) => /update run_enforcement_records set settled_at = .+, settlement = /i.test(sql))).toBe(true);
  expect(settlement[4]).toMatch(/^\s*commit/i);
  if (recorder.t.app.runtime.instances.alone) {
    expect(records.filter((sql) => /^\s*select/i.test(sql))).toHaveLength(0);
    // The request 12 (data_version; the reservation: begin, 2, commit; the run: begin, 5, commit), execution 8, settlement 5.
    expect(own.length, own.join('\n')).toBeLessThanOrEqual(25);
  }
});
