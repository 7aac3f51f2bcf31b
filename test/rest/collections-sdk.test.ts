import { Portkey } from 'portkey-ai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/*
 * The portkey-ai SDK against a real server: it sends x-portkey-api-key, a JSON body on DELETE and
 * needs a JSON body on every answer.
 */

const T0 = '2026-11-22T10:00:00.000Z';
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

let t: TestApp;
let client: Portkey;
let workspaceId: string;

beforeAll(async () => {
  t = await createTestApp({}, { clock: new ManualClock(new Date(T0)) });
  client = new Portkey({ apiKey: t.key, baseURL: `${await t.listen()}/v1` });
  workspaceId = (await t.request('GET', '/v1/admin/workspaces')).body.data[0].id;
});
afterAll(() => t.close());

/** The SDK adds helpers (getHeaders) to what it returns; compare the JSON. */
function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

it('collections.create / retrieve / list / update / delete', async () => {
  const parent = plain(await client.collections.create({ name: 'SDK prompts' })) as { id: string; slug: string };
  expect(parent).toEqual({ id: UUID, slug: 'sdk-prompts' });
  const child = plain(await client.collections.create({ name: 'Child', workspace_id: workspaceId, parent_collection_id: parent.id })) as {
    id: string;
    slug: string;
  };
  expect(child).toEqual({ id: UUID, slug: 'child' });

  expect(plain(await client.collections.retrieve(parent.slug))).toEqual({
    id: parent.id,
    name: 'SDK prompts',
    workspace_id: workspaceId,
    slug: 'sdk-prompts',
    parent_collection_id: null,
    is_default: false,
    status: 'active',
    created_at: T0,
    last_updated_at: T0,
    child_collections: [
      {
        id: child.id,
        name: 'Child',
        last_updated_at: T0,
        collection_details: { child_collections_count: 0, prompts_count: 0, child_collections_last_updated_at: null, prompts_last_updated_at: null },
      },
    ],
  });

  const list = plain(await client.collections.list({ workspace_id: workspaceId, search: 'sdk', current_page: 0, page_size: 10 })) as {
    total: number;
    data: Array<{ id: string }>;
  };
  expect(list.total).toBe(1);
  expect(list.data.map((c) => c.id)).toEqual([parent.id]);

  expect(plain(await client.collections.update(child.id, { name: 'Renamed child' }))).toEqual({});
  expect(plain(await client.collections.retrieve(child.id))).toMatchObject({ name: 'Renamed child', slug: 'child', parent_collection_id: parent.id });

  expect(plain(await client.collections.delete(child.id))).toEqual({});
  expect(plain(await client.collections.retrieve(child.id))).toMatchObject({ status: 'archived' });
  expect((plain(await client.collections.retrieve(parent.id)) as { child_collections: unknown[] }).child_collections).toEqual([]);
});

it('errors reach the SDK with their status and envelope', async () => {
  const missing = await client.collections.retrieve('no-such-collection').catch((error: unknown) => error);
  expect(missing).toMatchObject({
    status: 404,
    error: { error: { message: 'Collection not found.', type: 'invalid_request_error', param: 'collectionId', code: 'collection_not_found' } },
  });
  const refused = await client.collections.delete('default').catch((error: unknown) => error);
  expect(refused).toMatchObject({ status: 400 });
});
