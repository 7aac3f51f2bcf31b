import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuid } from '../../../src/lib/ids.js';
import { RequestLogSchema, type RequestLog } from '../../../src/modules/request-log/request-log.entity.js';
import { insertRequestLogs } from '../../../src/modules/request-log/request-log.insert.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';

/*
 * The request log's batch insert (bound multi-row statements of 64, 16, 4 and 1 rows): every
 * column of every record reads back through the entity as it was written, whatever the batch's
 * size, and a batch is all or nothing.
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

describe('insertRequestLogs', () => {
  for (const size of [1, 3, 4, 21, 85]) {
    it(`writes a batch of ${size} as it was given`, async () => {
      const records = Array.from({ length: size }, (_, i) => record(i));
      await insertRequestLogs(t.app.runtime, records);
      expect(await readBack(records.map((r) => r.id))).toEqual(records);
    });
  }

  it('writes none of a batch when one of its rows fails', async () => {
    const records = Array.from({ length: 20 }, (_, i) => record(i));
    // The last statement (a row of 4 after 16) repeats an id written by the first: a primary-key violation.
    records[19] = { ...records[19], id: records[0].id };
    await expect(insertRequestLogs(t.app.runtime, records)).rejects.toThrow();
    expect(await readBack(records.map((r) => r.id))).toEqual([]);
  });
});
