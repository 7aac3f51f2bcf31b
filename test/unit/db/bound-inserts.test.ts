import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRows } from '../../../src/db/bound-inserts.js';
import { uuid } from '../../../src/lib/ids.js';
import { GuardrailEvaluationSchema, type GuardrailEvaluation } from '../../../src/modules/guardrails/guardrail-evaluation.entity.js';
import { RequestLogSchema, type RequestLog } from '../../../src/modules/request-log/request-log.entity.js';
import { UsageBucketSchema } from '../../../src/modules/usage/usage-bucket.entity.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';

/*
 * Batched records' insert (bound multi-row statements of 64, 16, 4 and 1 rows, src/db/bound-inserts.ts,
 * used by BatchedInserts for the request log and guardrail evaluations): every column of every row
 * reads back through the entity as it was written, whatever the number of rows, and a call is all
 * or nothing.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const ORG = uuid();
const WORKSPACE = uuid();

function record(i: number): RequestLog {
  const odd = i % 2 === 1;
  return {
    id: uuid(),
    createdAt: new Date(Date.UTC(2026, 10, 24, 12, 0, 0, i)),
    organisationId: ORG,
    workspaceId: WORKSPACE,
    apiKeyId: odd ? null : `key-${i}`,
    virtualKey: odd ? null : 'openai-prod',
    provider: odd ? null : 'openai',
    model: odd ? null : `gpt-4o-mini-${i}`,
    route: odd ? 'embeddings' : 'chat.completions',
    status: odd ? 446 : 200,
    stream: odd,
    promptTokens: 12 + i,
    completionTokens: 5 * i,
    totalTokens: 12 + 6 * i,
    cost: 0.000_001_5 * (i + 1),
    totalMs: 1.25 + i,
    upstreamMs: odd ? null : 0.5 + i,
    requestId: `req_${i}`,
    runId: odd ? `run_${i}` : null,
    // Placeholders, quotes and backslashes in values must stay values.
    metadata: odd ? {} : { user: `u?${i}`, note: `it's "quoted" \\ ?` },
    guardrails: odd ? [{ stage: 'input', id: `g${i}`, slug: 'has-words', verdict: false, deny: true }] : [],
    refusal: odd ? 'guardrail' : null,
  };
}

async function readBack(ids: string[]): Promise<RequestLog[]> {
  const rows = await t.app.runtime.fork().find(RequestLogSchema, { id: { $in: ids } }, { orderBy: { createdAt: 'asc' } });
  return rows.map((row) => ({ ...row }));
}

describe('insertRows', () => {
  for (const size of [1, 3, 4, 21, 85]) {
    it(`writes ${size} request-log records as they were given`, async () => {
      const records = Array.from({ length: size }, (_, i) => record(i));
      await insertRows(t.app.runtime, RequestLogSchema, records);
      expect(await readBack(records.map((r) => r.id))).toEqual(records);
    });
  }

  it('writes none of a batch when one of its rows fails', async () => {
    const records = Array.from({ length: 20 }, (_, i) => record(i));
    // The last statement (a row of 4 after 16) repeats an id written by the first: a primary-key violation.
    records[19] = { ...records[19], id: records[0].id };
    await expect(insertRows(t.app.runtime, RequestLogSchema, records)).rejects.toThrow();
    expect(await readBack(records.map((r) => r.id))).toEqual([]);
  });

  it('writes guardrail evaluations as they were given (enum, booleans, JSON objects and arrays, a column named async)', async () => {
    const evaluations: GuardrailEvaluation[] = Array.from({ length: 6 }, (_, i) => ({
      id: uuid(),
      organisationId: ORG,
      workspaceId: i === 0 ? null : WORKSPACE,
      guardrailId: uuid(),
      versionId: uuid(),
      stage: i % 2 === 0 ? 'input' : 'output',
      verdict: i % 3 !== 0,
      deny: i % 3 === 0,
      async: i === 5,
      checks: [{ id: 'default.regexMatch', verdict: i % 3 !== 0, durationMs: 0.25 * i } as never],
      feedback: { message: `it's ? ${i}` } as never,
      durationMs: 0.5 + i,
      runId: i === 1 ? `run_${i}` : null,
      requestId: `req_${i}`,
      createdAt: new Date(Date.UTC(2026, 10, 24, 12, 0, 0, i)),
    }));
    await insertRows(t.app.runtime, GuardrailEvaluationSchema, evaluations);
    const rows = await t.app.runtime.fork().find(GuardrailEvaluationSchema, { id: { $in: evaluations.map((e) => e.id) } }, { orderBy: { createdAt: 'asc' } });
    expect(rows.map((row) => ({ ...row }))).toEqual(evaluations);
  });

  it('leaves an entity with defaults to MikroORM (a row that omits them still gets them)', async () => {
    const id = uuid();
    const now = new Date(Date.UTC(2026, 10, 24, 12));
    // used, reserved and the alert flags have defaults: bound statements would write nulls into NOT NULL columns.
    const row = { id, ownerType: 'policy', ownerId: uuid(), valueKey: 'k', periodKey: 'all', periodicReset: null, type: 'tokens', creditLimit: 10, alertThreshold: null, workspaceId: null, createdAt: now, updatedAt: now };
    await insertRows(t.app.runtime, UsageBucketSchema, [row as never]);
    const stored = await t.app.runtime.fork().findOneOrFail(UsageBucketSchema, { id });
    expect({ used: stored.used, reserved: stored.reserved, thresholdAlertSent: stored.thresholdAlertSent }).toEqual({ used: 0, reserved: 0, thresholdAlertSent: false });
  });
});
