/**
 * A new run reads its assistant from the config cache: a modified assistant's defaults apply to
 * the very next run, a deleted one is 404 at once, and another workspace's key never gets a
 * cached assistant it cannot see.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { error } from '../helpers/errors.js';
import { createWorkspaceWithKey } from '../helpers/tenants.js';
import { H, ok } from '../helpers/run-fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const newRun = (assistantId: string, key?: string) =>
  t.request('POST', '/v1/threads/runs', { body: { assistant_id: assistantId, thread: { messages: [{ role: 'user', content: 'hi' }] } }, headers: H, key });

it('a run copies the assistant as it is now: after a modify, after a delete, and only for keys that see it', async () => {
  const assistant = await ok(t, 'POST', '/v1/assistants', { model: 'local-test', instructions: 'first' });
  expect((await newRun(assistant.id)).body).toMatchObject({ instructions: 'first', model: 'local-test' });

  await ok(t, 'POST', `/v1/assistants/${assistant.id}`, { instructions: 'second' });
  expect((await newRun(assistant.id)).body).toMatchObject({ instructions: 'second' });

  const other = await createWorkspaceWithKey(t, 'Cache team');
  const hidden = await newRun(assistant.id, other.key);
  expect({ status: hidden.status, body: hidden.body }).toEqual({ status: 404, body: error(`No assistant found with id '${assistant.id}'.`) });

  await ok(t, 'DELETE', `/v1/assistants/${assistant.id}`);
  const gone = await newRun(assistant.id);
  expect({ status: gone.status, body: gone.body }).toEqual({ status: 404, body: error(`No assistant found with id '${assistant.id}'.`) });
});
