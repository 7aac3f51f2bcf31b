import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { errorResponse } from '../helpers/errors.js';

/*
 * Whole-body contract tests of the collection routes (docs/contract.md#collections). A manual clock
 * makes every time exact; only generated ids are matched by shape.
 */

const T0 = '2026-11-22T10:00:00.000Z';
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const JSON_TYPE = 'application/json; charset=utf-8';

let t: TestApp;
const clock = new ManualClock(new Date(T0));
let workspaceId: string;

beforeAll(async () => {
  t = await createTestApp({}, { clock });
  const workspaces = await t.request('GET', '/v1/admin/workspaces');
  workspaceId = workspaces.body.data.find((w: { slug: string }) => w.slug === 'default').id;
});
afterAll(() => t.close());

/** Moves the clock one second and returns the new time as the wire shows it. */
function tick(): string {
  clock.advance(1000);
  return clock.now().toISOString();
}

async function create(body: Record<string, unknown>): Promise<{ id: string; slug: string }> {
  const r = await t.request('POST', '/v1/collections', { body });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

async function createPrompt(collectionId: string, name: string): Promise<string> {
  const g = await t.graphql(
    'mutation($input: CreatePromptInput!) { createPrompt(input: $input) { id } }',
    { input: { collectionId, name, string: 'Hello {{name}}', model: 'gpt-4o-mini' } },
  );
  expect(g.errors).toBeUndefined();
  return g.data.createPrompt.id;
}

function pick(r: { status: number; body: unknown }) {
  return { status: r.status, body: r.body };
}

const NO_DETAILS = { child_collections_count: 0, prompts_count: 0, child_collections_last_updated_at: null, prompts_last_updated_at: null };

describe('GET /v1/collections/{collectionId}', () => {
  it('the default collection exists from the first start: the whole body, by slug', async () => {
    const r = await t.request('GET', '/v1/collections/default');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(JSON_TYPE);
    expect(r.body).toEqual({
      id: UUID,
      name: 'Default',
      workspace_id: workspaceId,
      slug: 'default',
      parent_collection_id: null,
      is_default: true,
      status: 'active',
      created_at: T0,
      last_updated_at: T0,
      child_collections: [],
    });
    expect(Object.keys(r.body)).toEqual([
      'id', 'name', 'workspace_id', 'slug', 'parent_collection_id', 'is_default', 'status', 'created_at', 'last_updated_at', 'child_collections',
    ]);
  });

  it('lists direct, non-archived children by name, each with live collection_details', async () => {
    const t1 = tick();
    const root = await create({ name: 'Support bots' });
    const t2 = tick();
    const zeta = await create({ name: 'Zeta', parent_collection_id: root.id });
    const t3 = tick();
    const alpha = await create({ name: 'alpha', parent_collection_id: root.id });
    tick();
    const gone = await create({ name: 'Beta (archived)', parent_collection_id: root.id });
    tick();
    expect((await t.request('DELETE', `/v1/collections/${gone.id}`)).status).toBe(200);
    // alpha gets two child collections and two prompts, one of each archived later.
    const t4 = tick();
    await create({ name: 'alpha child', parent_collection_id: alpha.id });
    tick();
    const alphaGone = await create({ name: 'alpha child archived', parent_collection_id: alpha.id });
    const t5 = tick();
    await createPrompt(alpha.id, 'Greeting');
    tick();
    const promptGone = await createPrompt(alpha.id, 'Farewell');
    tick();
    await t.request('DELETE', `/v1/collections/${alphaGone.id}`);
    const archived = await t.graphql('mutation($id: String!) { archivePrompt(promptId: $id) { status } }', { id: promptGone });
    expect(archived.data).toEqual({ archivePrompt: { status: 'archived' } });

    const r = await t.request('GET', `/v1/collections/${root.id}`);
    expect(pick(r)).toEqual({
      status: 200,
      body: {
        id: root.id,
        name: 'Support bots',
        workspace_id: workspaceId,
        slug: 'support-bots',
        parent_collection_id: null,
        is_default: false,
        status: 'active',
        created_at: t1,
        last_updated_at: t1,
        child_collections: [
          {
            id: alpha.id,
            name: 'alpha',
            last_updated_at: t3,
            collection_details: {
              child_collections_count: 1,
              prompts_count: 1,
              child_collections_last_updated_at: t4,
              prompts_last_updated_at: t5,
            },
          },
          { id: zeta.id, name: 'Zeta', last_updated_at: t2, collection_details: NO_DETAILS },
        ],
      },
    });

    const child = await t.request('GET', `/v1/collections/${zeta.slug}`);
    expect(pick(child)).toEqual({
      status: 200,
      body: {
        id: zeta.id,
        name: 'Zeta',
        workspace_id: workspaceId,
        slug: 'zeta',
        parent_collection_id: root.id,
        is_default: false,
        status: 'active',
        created_at: t2,
        last_updated_at: t2,
        child_collections: [],
      },
    });
  });

  it('the same collection by id, by upper-case id and by slug', async () => {
    const c = await create({ name: 'Lookup me' });
    const byId = await t.request('GET', `/v1/collections/${c.id}`);
    const byUpper = await t.request('GET', `/v1/collections/${c.id.toUpperCase()}`);
    const bySlug = await t.request('GET', `/v1/collections/${c.slug}`);
    expect(byId.status).toBe(200);
    expect(byUpper.body).toEqual(byId.body);
    expect(bySlug.body).toEqual(byId.body);
  });

  it('a large answer (over 64 KB, sent as bytes) arrives whole over HTTP, its Content-Length exact', async () => {
    const parent = await create({ name: 'Many children' });
    for (let i = 0; i < 120; i++) await create({ name: `${String(i).padStart(3, '0')} ${'é'.repeat(240)}`, parent_collection_id: parent.id });
    const inProcess = await t.request('GET', `/v1/collections/${parent.id}`);
    expect(inProcess.body.child_collections).toHaveLength(120);
    const response = await fetch(`${await t.listen()}/v1/collections/${parent.id}`, { headers: { 'x-gateway-api-key': t.key } });
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(JSON_TYPE);
    expect(bytes.length).toBeGreaterThan(64 * 1024);
    expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual(inProcess.body);
  });

  it('unknown id or slug: 404 Collection not found.', async () => {
    const expected = errorResponse(404, 'Collection not found.', 'collectionId', 'collection_not_found');
    const unknownId = await t.request('GET', '/v1/collections/7b0a7c53-3c7d-4f57-9d55-2a8c7d0e2f11');
    expect(pick(unknownId)).toEqual(expected);
    expect(unknownId.headers.get('content-type')).toBe(JSON_TYPE);
    expect(pick(await t.request('GET', '/v1/collections/no-such-slug'))).toEqual(expected);
    // Almost a UUID is just an unknown slug.
    expect(pick(await t.request('GET', '/v1/collections/7b0a7c53-3c7d-4f57-9d55-2a8c7d0e2f1'))).toEqual(expected);
  });

  it('needs an API key', async () => {
    const r = await t.request('GET', '/v1/collections/default', { key: null });
    expect(pick(r)).toEqual({
      status: 401,
      body: { error: { message: 'Missing API key: send it in the x-gateway-api-key header.', type: 'authentication_error', param: null, code: 'invalid_api_key' } },
    });
  });
});

describe('POST /v1/collections', () => {
  it('returns exactly {id, slug}; slugs come from the name and get a suffix when taken', async () => {
    const a = await t.request('POST', '/v1/collections', { body: { name: 'Marketing Copy' } });
    expect(pick(a)).toEqual({ status: 200, body: { id: UUID, slug: 'marketing-copy' } });
    expect(a.headers.get('content-type')).toBe(JSON_TYPE);
    const b = await t.request('POST', '/v1/collections', { body: { name: 'marketing  copy!' } });
    expect(pick(b)).toEqual({ status: 200, body: { id: UUID, slug: 'marketing-copy-2' } });
    const c = await t.request('POST', '/v1/collections', { body: { name: 'Marketing copy', parent_collection_id: a.body.id } });
    expect(pick(c)).toEqual({ status: 200, body: { id: UUID, slug: 'marketing-copy-3' } });
    expect(new Set([a.body.id, b.body.id, c.body.id]).size).toBe(3);
  });

  it('slugs are URL-safe, and never read as a UUID', async () => {
    expect((await create({ name: 'Café Ünïcode' })).slug).toBe('cafe-unicode');
    expect((await create({ name: '¡¿!?' })).slug).toBe('collection');
    const uuidName = 'AB0A7C53-3C7D-4F57-9D55-2A8C7D0E2F11';
    const c = await create({ name: uuidName });
    expect(c.slug).toBe('ab0a7c53-3c7d-4f57-9d55-2a8c7d0e2f11-2');
    const r = await t.request('GET', `/v1/collections/${c.slug}`);
    expect(r.body).toMatchObject({ id: c.id, name: uuidName });
  });

  it('a child lands in its parent’s workspace; workspace_id by slug works', async () => {
    const parent = await create({ name: 'Parent', workspace_id: 'default' });
    const child = await create({ name: 'Child', parent_collection_id: parent.id });
    const r = await t.request('GET', `/v1/collections/${child.id}`);
    expect(r.body).toMatchObject({ workspace_id: workspaceId, parent_collection_id: parent.id });
  });

  it('bad input: 400 or 404 naming the parameter, never a 500', async () => {
    const archived = await create({ name: 'Archived parent' });
    await t.request('DELETE', `/v1/collections/${archived.id}`);
    const cases: Array<[unknown, ReturnType<typeof errorResponse>]> = [
      [{}, errorResponse(400, "Missing required parameter: 'name'.", 'name', 'missing_required_parameter')],
      [{ name: 42 }, errorResponse(400, "Invalid type for 'name': expected a string, but got an integer instead.", 'name', 'invalid_type')],
      [{ name: '' }, errorResponse(400, "'name' must be a non-empty string.", 'name', null)],
      [{ name: '   ' }, errorResponse(400, "'name' must be a non-empty string.", 'name', null)],
      [{ name: 'x'.repeat(256) }, errorResponse(400, "'name' must be at most 255 characters.", 'name', null)],
      [{ name: 'A', workspace_id: 'nope' }, errorResponse(404, "Workspace not found: 'nope'.", 'workspace_id', 'workspace_not_found')],
      [{ name: 'A', workspace_id: 7 }, errorResponse(400, "Invalid type for 'workspace_id': expected a string, but got an integer instead.", 'workspace_id', 'invalid_type')],
      [{ name: 'A', parent_collection_id: 'not-a-uuid' }, errorResponse(400, "'parent_collection_id' must be a collection id (a UUID).", 'parent_collection_id', 'invalid_value')],
      [
        { name: 'A', parent_collection_id: '7b0a7c53-3c7d-4f57-9d55-2a8c7d0e2f11' },
        errorResponse(404, 'Parent collection not found.', 'parent_collection_id', 'collection_not_found'),
      ],
      [{ name: 'A', parent_collection_id: archived.id }, errorResponse(400, 'The parent collection is archived.', 'parent_collection_id', 'collection_archived')],
    ];
    for (const [body, expected] of cases) {
      expect(pick(await t.request('POST', '/v1/collections', { body })), JSON.stringify(body)).toEqual(expected);
    }
  });

  it('a parent in another workspace: 400', async () => {
    const ws = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Parent elsewhere' } });
    const elsewhere = await create({ name: 'Elsewhere', workspace_id: ws.body.id });
    const r = await t.request('POST', '/v1/collections', { body: { name: 'Here', workspace_id: 'default', parent_collection_id: elsewhere.id } });
    expect(pick(r)).toEqual(errorResponse(400, "The parent collection is not in workspace 'default'.", 'parent_collection_id', 'invalid_value'));
  });

  it('malformed JSON and non-JSON bodies are refused by the REST layer', async () => {
    const bad = await t.request('POST', '/v1/collections', { rawBody: '{"name":', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_json');
    const text = await t.request('POST', '/v1/collections', { rawBody: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
  });
});

describe('GET /v1/collections', () => {
  let ws: { id: string; slug: string };
  let ids: Record<string, string>;
  const times: Record<string, string> = {};

  beforeAll(async () => {
    const r = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Listing' } });
    ws = r.body;
    ids = {};
    for (const name of ['Orders', 'billing', 'Order history', 'Refunds_%']) {
      times[name] = tick();
      ids[name] = (await create({ name, workspace_id: ws.id })).id;
    }
    times['Orders nested'] = tick();
    ids['Orders nested'] = (await create({ name: 'Orders nested', parent_collection_id: ids.Orders })).id;
    const gone = await create({ name: 'Orders archived', workspace_id: ws.id });
    await t.request('DELETE', `/v1/collections/${gone.id}`);
  });

  function item(name: string, slug: string, parent: string | null = null, details: Record<string, unknown> = NO_DETAILS) {
    return {
      id: ids[name],
      name,
      workspace_id: ws.id,
      slug,
      parent_collection_id: parent,
      is_default: false,
      status: 'active',
      created_at: times[name],
      last_updated_at: times[name],
      collection_details: details,
    };
  }

  it('{total, data}: active collections of the workspace at every level, by name', async () => {
    const r = await t.request('GET', `/v1/collections?workspace_id=${ws.id}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(JSON_TYPE);
    expect(Object.keys(r.body)).toEqual(['total', 'data']);
    expect(r.body.total).toBe(6);
    expect(r.body.data.map((c: { name: string }) => c.name)).toEqual(['billing', 'Default', 'Order history', 'Orders', 'Orders nested', 'Refunds_%']);
    expect(r.body.data[3]).toEqual(
      item('Orders', 'orders', null, {
        child_collections_count: 1,
        prompts_count: 0,
        child_collections_last_updated_at: times['Orders nested'],
        prompts_last_updated_at: null,
      }),
    );
    expect(r.body.data[4]).toEqual(item('Orders nested', 'orders-nested', ids.Orders));
  });

  it('search matches part of the name, case-insensitively; % and _ match themselves', async () => {
    const r = await t.request('GET', `/v1/collections?workspace_id=${ws.slug}&search=ORDER`);
    expect(pick(r)).toEqual({
      status: 200,
      body: {
        total: 3,
        data: [
          item('Order history', 'order-history'),
          item('Orders', 'orders', null, {
            child_collections_count: 1,
            prompts_count: 0,
            child_collections_last_updated_at: times['Orders nested'],
            prompts_last_updated_at: null,
          }),
          item('Orders nested', 'orders-nested', ids.Orders),
        ],
      },
    });
    const literal = await t.request('GET', `/v1/collections?workspace_id=${ws.id}&search=${encodeURIComponent('_%')}`);
    expect(literal.body).toEqual({ total: 1, data: [item('Refunds_%', 'refunds')] });
    const none = await t.request('GET', `/v1/collections?workspace_id=${ws.id}&search=zzz`);
    expect(pick(none)).toEqual({ status: 200, body: { total: 0, data: [] } });
  });

  it('pages are zero-based; page_size 0 gives only the total', async () => {
    const page = await t.request('GET', `/v1/collections?workspace_id=${ws.id}&page_size=2&current_page=1`);
    expect(page.body.total).toBe(6);
    expect(page.body.data.map((c: { name: string }) => c.name)).toEqual(['Order history', 'Orders']);
    const past = await t.request('GET', `/v1/collections?workspace_id=${ws.id}&page_size=2&current_page=9`);
    expect(pick(past)).toEqual({ status: 200, body: { total: 6, data: [] } });
    const zero = await t.request('GET', `/v1/collections?workspace_id=${ws.id}&page_size=0`);
    expect(pick(zero)).toEqual({ status: 200, body: { total: 6, data: [] } });
  });

  it('without workspace_id: the organisation’s default workspace', async () => {
    const r = await t.request('GET', '/v1/collections?search=default');
    expect(r.body.data.map((c: { workspace_id: string; slug: string }) => [c.workspace_id, c.slug])).toEqual([[workspaceId, 'default']]);
  });

  it('bad paging and unknown workspaces: 400 or 404 naming the parameter', async () => {
    const cases: Array<[string, ReturnType<typeof errorResponse>]> = [
      ['current_page=-1', errorResponse(400, "Invalid value for 'current_page': expected an integer greater than or equal to 0.", 'current_page', 'invalid_value')],
      ['page_size=-1', errorResponse(400, "Invalid value for 'page_size': expected an integer from 0 to 1000.", 'page_size', 'invalid_value')],
      ['page_size=1001', errorResponse(400, "Invalid value for 'page_size': expected an integer from 0 to 1000.", 'page_size', 'invalid_value')],
      ['page_size=ten', errorResponse(400, "Invalid type for 'page_size': expected an integer, but got 'ten' instead.", 'page_size', 'invalid_type')],
      ['current_page=1.5', errorResponse(400, "Invalid type for 'current_page': expected an integer, but got '1.5' instead.", 'current_page', 'invalid_type')],
      ['workspace_id=nope', errorResponse(404, "Workspace not found: 'nope'.", 'workspace_id', 'workspace_not_found')],
      [`search=${'x'.repeat(256)}`, errorResponse(400, "'search' must be at most 255 characters.", 'search', 'invalid_value')],
    ];
    for (const [query, expected] of cases) {
      expect(pick(await t.request('GET', `/v1/collections?${query}`)), query).toEqual(expected);
    }
  });
});

describe('PUT /v1/collections/{collectionId}', () => {
  it('renames: {} and the new name, the same slug, a new last_updated_at', async () => {
    const created = tick();
    const c = await create({ name: 'Old name' });
    const renamed = tick();
    const r = await t.request('PUT', `/v1/collections/${c.slug}`, { body: { name: 'New name' } });
    expect(pick(r)).toEqual({ status: 200, body: {} });
    expect(r.headers.get('content-type')).toBe(JSON_TYPE);
    const after = await t.request('GET', `/v1/collections/${c.id}`);
    expect(after.body).toMatchObject({ name: 'New name', slug: 'old-name', created_at: created, last_updated_at: renamed });
  });

  it('bad names, unknown and archived collections', async () => {
    const c = await create({ name: 'Rename target' });
    const cases: Array<[string, unknown, ReturnType<typeof errorResponse>]> = [
      [c.id, {}, errorResponse(400, "Missing required parameter: 'name'.", 'name', 'missing_required_parameter')],
      [c.id, { name: '' }, errorResponse(400, "'name' must be a non-empty string.", 'name', null)],
      [c.id, { name: 'y'.repeat(256) }, errorResponse(400, "'name' must be at most 255 characters.", 'name', null)],
      ['no-such-collection', { name: 'x' }, errorResponse(404, 'Collection not found.', 'collectionId', 'collection_not_found')],
    ];
    for (const [id, body, expected] of cases) {
      expect(pick(await t.request('PUT', `/v1/collections/${id}`, { body })), JSON.stringify(body)).toEqual(expected);
    }
    await t.request('DELETE', `/v1/collections/${c.id}`);
    expect(pick(await t.request('PUT', `/v1/collections/${c.id}`, { body: { name: 'x' } }))).toEqual(
      errorResponse(400, 'Archived collections cannot be changed.', 'collectionId', 'collection_archived'),
    );
  });
});

describe('DELETE /v1/collections/{collectionId}', () => {
  it('archives: {}; the collection stays readable with status archived and leaves its parent', async () => {
    const parent = await create({ name: 'Delete parent' });
    const c = await create({ name: 'Delete me', parent_collection_id: parent.id });
    const archivedAt = tick();
    const r = await t.request('DELETE', `/v1/collections/${c.slug}`);
    expect(pick(r)).toEqual({ status: 200, body: {} });
    expect(r.headers.get('content-type')).toBe(JSON_TYPE);
    const after = await t.request('GET', `/v1/collections/${c.id}`);
    expect(after.body).toMatchObject({ status: 'archived', last_updated_at: archivedAt });
    const p = await t.request('GET', `/v1/collections/${parent.id}`);
    expect(p.body.child_collections).toEqual([]);
    // Again: still {}, nothing changes.
    tick();
    expect(pick(await t.request('DELETE', `/v1/collections/${c.id}`))).toEqual({ status: 200, body: {} });
    expect((await t.request('GET', `/v1/collections/${c.id}`)).body.last_updated_at).toBe(archivedAt);
  });

  it('a JSON body on DELETE is tolerated (the portkey-ai SDK sends one)', async () => {
    const c = await create({ name: 'Delete with body' });
    expect(pick(await t.request('DELETE', `/v1/collections/${c.id}`, { body: {} }))).toEqual({ status: 200, body: {} });
  });

  it('the default collection cannot be deleted: 400; unknown: 404', async () => {
    expect(pick(await t.request('DELETE', '/v1/collections/default'))).toEqual(
      errorResponse(400, 'The default collection of a workspace cannot be archived.', 'collectionId', 'default_collection'),
    );
    expect((await t.request('GET', '/v1/collections/default')).body.status).toBe('active');
    expect(pick(await t.request('DELETE', '/v1/collections/7b0a7c53-3c7d-4f57-9d55-2a8c7d0e2f11'))).toEqual(
      errorResponse(404, 'Collection not found.', 'collectionId', 'collection_not_found'),
    );
  });
});
