/**
 * usageSummary by day and hour, and the log's time-range filters, on a manual clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeSql } from '../../src/db/sql.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const clock = new ManualClock(new Date('2026-11-20T10:05:00.000Z'));
let t: TestApp;
const tokens: number[] = [];

beforeAll(async () => {
  t = await createTestApp({}, { clock });
  for (const at of ['2026-11-20T10:05:00.000Z', '2026-11-20T10:40:00.000Z', '2026-11-20T11:30:00.000Z', '2026-11-21T09:00:00.000Z']) {
    clock.set(at);
    const r = await t.request('POST', '/v1/chat/completions', { body: { model: '@local/local', messages: [{ role: 'user', content: `at ${at}` }] } });
    expect(r.status, r.text).toBe(200);
    tokens.push(r.body.usage.total_tokens);
  }
});
afterAll(() => t.close());

describe('usageSummary over time', () => {
  it('groups by day and by hour (UTC)', async () => {
    const byDay = await t.graphql('{ usageSummary(groupBy: [day]) { day hour requests totalTokens } }');
    expect(byDay.data.usageSummary).toEqual([
      { day: '2026-11-20', hour: null, requests: 3, totalTokens: tokens[0] + tokens[1] + tokens[2] },
      { day: '2026-11-21', hour: null, requests: 1, totalTokens: tokens[3] },
    ]);
    const byHour = await t.graphql('{ usageSummary(groupBy: [hour]) { hour requests } }');
    expect(byHour.data.usageSummary).toEqual([
      { hour: '2026-11-20T10:00:00Z', requests: 2 },
      { hour: '2026-11-20T11:00:00Z', requests: 1 },
      { hour: '2026-11-21T09:00:00Z', requests: 1 },
    ]);
    const total = await t.graphql('{ usageSummary { requests errors totalTokens } }');
    expect(total.data.usageSummary).toEqual([{ requests: 4, errors: 0, totalTokens: tokens.reduce((a, b) => a + b, 0) }]);
  });

  it('filters the log by time range (from inclusive, to exclusive; ISO or Unix seconds)', async () => {
    const r = await t.request('GET', `/v1/logs?from=2026-11-20T10:40:00Z&to=${Date.parse('2026-11-21T09:00:00Z') / 1000}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.map((x: any) => x.created_at)).toEqual(['2026-11-20T11:30:00.000Z', '2026-11-20T10:40:00.000Z']);
  });
});

describe('usageSummary totals', () => {
  // Last in the file: it rewrites the token counts of every record.
  it('sum past 2^31 exactly (GraphQL Int would refuse to serialise them)', async () => {
    // Each row within a 32-bit integer column (PostgreSQL's integer), the sums of the four past it.
    const large = 1_000_000_000;
    await executeSql(t.app.runtime.fork(), 'update request_logs set prompt_tokens = ?, completion_tokens = ?, total_tokens = ?', [large, large, 2 * large], 'run');
    const total = await t.graphql('{ usageSummary { requests promptTokens completionTokens totalTokens } }');
    expect(total.errors).toBeUndefined();
    expect(total.data.usageSummary).toEqual([{ requests: 4, promptTokens: 4 * large, completionTokens: 4 * large, totalTokens: 8 * large }]);
  });
});
