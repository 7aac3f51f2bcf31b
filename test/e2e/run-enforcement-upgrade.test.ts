/**
 * `Run.enforcement` is the same whichever way a database holds a run's first admission: from
 * migration 0008 a create to which nothing applied writes no enforcement record (its run row holds
 * its kind and request id); runs written before have that record instead (and null columns).
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MikroORM, type Options } from '@mikro-orm/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { configFrom } from '../../src/config.js';
import { executeSql } from '../../src/db/sql.js';
import { SqliteDriver } from '../../src/db/sqlite-driver.js';
import { EnforcementRecordSchema } from '../../src/modules/enforcement/enforcement-record.entity.js';
import { RunSchema } from '../../src/modules/runs/run.entity.js';
import { createTestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { RUN_ENFORCEMENT, allSettled } from '../helpers/enforcement.js';
import { H, ok, startRun, waitFor, weatherTool } from '../helpers/run-fixtures.js';

const VIEW = RUN_ENFORCEMENT.replace('admissions { kind requestId', 'admissions { kind requestId createdAt');
const QUERY = `query($t: String!, $r: String!) { run(threadId: $t, id: $r) { ${VIEW} } }`;

it('a run admitted with nothing shows the same Run.enforcement from its row as from a record written before 0008', async () => {
  const t = await createTestApp();
  try {
    const { thread, run } = await startRun(t, 'get_weather for Lyon', {}, { tools: [weatherTool] });
    const waiting = await waitFor(t, thread.id, run.id, ['requires_action']);
    const callId = waiting.required_action.submit_tool_outputs.tool_calls[0].id;
    await ok(t, 'POST', `/v1/threads/${thread.id}/runs/${run.id}/submit_tool_outputs`, { tool_outputs: [{ tool_call_id: callId, output: 'rain' }] });
    await waitFor(t, thread.id, run.id, ['completed']);
    await allSettled(t);
    const view = async () => {
      const r = await t.graphql(QUERY, { t: thread.id, r: run.id });
      expect(r.errors).toBeUndefined();
      return r.data.run.enforcement;
    };

    const em = t.app.runtime.fork();
    const [row] = await executeSql<{ admission_kind: string | null; admission_request_id: string | null }[]>(
      em,
      'select admission_kind, admission_request_id from runs where id = ?',
      [run.id],
    );
    // The create wrote no record: only the submission's.
    const records = await em.find(EnforcementRecordSchema, { runId: run.id }, { orderBy: { ordinal: 'asc' } });
    expect(records.map((r) => r.kind)).toEqual(['submit_tool_outputs']);
    expect(row.admission_kind).toBe('create_run');
    expect(row.admission_request_id).toEqual(expect.any(String));
    const fromRow = await view();
    expect(fromRow.admissions.map((a: { kind: string; requestId: string }) => [a.kind, a.requestId])).toEqual([
      ['create_run', row.admission_request_id],
      ['submit_tool_outputs', records[0].requestId],
    ]);

    // The same run as a database written before 0008 holds it: the create's record, the row's columns null.
    const { createdAt } = await em.findOneOrFail(RunSchema, { id: run.id });
    await em.insert(EnforcementRecordSchema, {
      id: '00000000-0000-4000-8000-000000000008',
      runId: run.id,
      organisationId: records[0].organisationId,
      workspaceId: records[0].workspaceId,
      ordinal: records[0].ordinal - 1,
      stage: 'admission',
      kind: row.admission_kind!,
      requestId: row.admission_request_id,
      admission: { status: 200, rateLimit: null, limits: [], estimate: null },
      guardrails: null,
      reservation: null,
      prices: null,
      usageAtStart: { prompt_tokens: 0, completion_tokens: 0 },
      settlement: null,
      settledAt: createdAt,
      createdAt,
    });
    await executeSql(em, 'update runs set admission_kind = null, admission_request_id = null where id = ?', [run.id], 'run');
    expect(await view()).toEqual(fromRow);
  } finally {
    await t.close();
  }
});

/** The SQLite release before versioned migrations (see upgrade.test.ts): one completed run with its admission record. */
const FIXTURE = join(import.meta.dirname, '../fixtures/gatehouse-0.1.0.sqlite');
const BOOTSTRAP_KEY = 'gk_fixture_bootstrap_key_0123456789';

describe.skipIf(onPostgres)('upgrading a database written before 0008', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-run-enforcement-upgrade-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps each run’s Run.enforcement as its records say, and lists a new run’s create from its row', async () => {
    const file = join(dir, 'upgrade.sqlite');
    copyFileSync(FIXTURE, file);
    // Read as stored, before the app opens (and migrates) the file.
    const stored = await MikroORM.init({ driver: SqliteDriver, dbName: file, discovery: { warnWhenNoEntities: false } } as Options);
    const read = (sql: string) => stored.em.getConnection().execute(sql, [], 'all');
    const [record] = await read("select * from run_enforcement_records where stage = 'admission'");
    const [{ thread_id: threadId, assistant_id: assistantId }] = await read(`select thread_id, assistant_id from runs where id = '${record.run_id}'`);
    await stored.close(true);

    const app = await createApp(configFrom({ DATABASE_URL: `sqlite:${file}`, GATEWAY_SECRET_KEY: 'ab'.repeat(32), LOG_LEVEL: 'silent' }));
    try {
      // Every call with the fixture's key and the data-plane headers (which the other routes ignore).
      const headers = { 'x-gateway-api-key': BOOTSTRAP_KEY, 'content-type': 'application/json', ...H };
      const send = (method: string, path: string, body?: unknown) =>
        app.fetch(new Request(`http://gatehouse.test${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
      const view = async (runId: string) => {
        const r = await (await send('POST', '/graphql', { query: QUERY, variables: { t: threadId, r: runId } })).json();
        expect(r.errors).toBeUndefined();
        return r.data.run.enforcement;
      };

      const admission = JSON.parse(record.admission);
      const settlement = JSON.parse(record.settlement);
      expect(await view(record.run_id)).toEqual({
        admissions: [
          {
            kind: record.kind,
            requestId: record.request_id,
            createdAt: new Date(record.created_at).toISOString(),
            status: admission.status,
            rateLimit: admission.rateLimit,
            limits: admission.limits,
            estimate: admission.estimate,
            inputGuardrails: null,
            settlement: { action: settlement.action, promptTokens: settlement.promptTokens, completionTokens: settlement.completionTokens, totalTokens: settlement.totalTokens, cost: settlement.cost },
          },
        ],
        outputGuardrails: [],
      });

      // A run created on the upgraded file with nothing to enforce (the fixture's policy archived):
      // no record of its create, which is listed from its row.
      const policies = (await (await send('GET', '/v1/policies/usage-limits')).json()).data as { id: string }[];
      for (const policy of policies) expect((await send('DELETE', `/v1/policies/usage-limits/${policy.id}`)).status).toBe(200);
      const response = await send('POST', `/v1/threads/${threadId}/runs`, { assistant_id: assistantId });
      expect(response.status).toBe(200);
      const created = await response.json();
      expect((await view(created.id)).admissions).toEqual([
        expect.objectContaining({ kind: 'create_run', requestId: response.headers.get('x-gateway-request-id'), limits: [], estimate: null, settlement: null }),
      ]);
      const records = await executeSql<unknown[]>(app.runtime.fork(), 'select id from run_enforcement_records where run_id = ?', [created.id]);
      expect(records).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
