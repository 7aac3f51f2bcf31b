import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeSql } from '../../src/db/sql.js';
import { ManualClock } from '../../src/lib/clock.js';
import { uuid } from '../../src/lib/ids.js';
import { policyPage, type PolicyListFilter } from '../../src/modules/policies/policy-list.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../helpers/tenants.js';

/*
 * The policy list at any size (src/modules/policies/policy-list.ts): its total comes from counts
 * that triggers keep (usage_policy_counts, migration 0006_policy_counts), and a page is found by
 * walking the list's index from the nearest page anchor before it. Here: the counts stay equal to
 * what is stored through every kind of write, and every page, across anchors and after writes, is
 * the slice of the whole list.
 */

const BASE = '/v1/policies/usage-limits';
const T0 = '2026-11-22T10:00:00.000Z';
const minimal = { conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }], credit_limit: 100 };

let t: TestApp;
const clock = new ManualClock(new Date(T0));
let statements: string[] | null = null;
let other: { workspaceId: string; slug: string; key: string };

beforeAll(async () => {
  t = await createTestApp({}, { clock, onQuery: (sql) => statements?.push(sql) });
  other = await createWorkspaceWithKey(t, 'Other');
});
afterAll(() => t.close());

async function create(body: Record<string, unknown>): Promise<string> {
  const r = await t.request('POST', BASE, { body: { ...minimal, type: 'tokens', ...body } });
  expect(r.status, r.text).toBe(200);
  return r.body.id;
}

const sql = <T>(statement: string, params: unknown[] = []) => executeSql<T[]>(t.app.runtime.fork(), statement, params);

/** The kept counts (zero rows left out) next to a count of the stored policies: they must be equal. */
async function expectCountsRight(): Promise<void> {
  const columns = 'organisation_id, workspace_id, status, type';
  const kept = await sql(`select ${columns}, policies from usage_policy_counts where policies <> 0 order by ${columns}`);
  const stored = await sql(`select ${columns}, count(*) as policies from usage_limits_policies group by ${columns} order by ${columns}`);
  expect(kept.map((row: any) => ({ ...row, policies: Number(row.policies) }))).toEqual(stored.map((row: any) => ({ ...row, policies: Number(row.policies) })));
}

const total = async (query = '', key?: string) => {
  const r = await t.request('GET', `${BASE}?page_size=0${query}`, { key });
  expect(r.status, r.text).toBe(200);
  return r.body.total;
};

describe('the total', () => {
  it('stays the count of what is stored through create, update, archive and concurrent writes', async () => {
    const tokens = [await create({}), await create({}), await create({})];
    await create({ type: 'cost', workspace_id: other.slug });
    await create({ type: 'cost' });
    await expectCountsRight();
    expect([await total(), await total('&type=cost'), await total('&workspace_id=other'), await total('', other.key)]).toEqual([5, 2, 1, 1]);

    // An update changes neither status nor type: the counts stay.
    expect((await t.request('PUT', `${BASE}/${tokens[0]}`, { body: { name: 'renamed', credit_limit: 5 } })).status).toBe(200);
    await expectCountsRight();

    // Archiving moves one policy from active to archived, once however often it is asked.
    expect((await t.request('DELETE', `${BASE}/${tokens[1]}`)).status).toBe(200);
    expect((await t.request('DELETE', `${BASE}/${tokens[1]}`)).status).toBe(200);
    await expectCountsRight();
    expect([await total(), await total('&status=archived'), await total('&status=archived&type=tokens')]).toEqual([4, 1, 1]);

    // Many writers at once: every create counted, one policy archived by many callers counted once.
    await Promise.all(Array.from({ length: 24 }, (_v, i) => create({ type: i % 2 ? 'cost' : 'tokens', workspace_id: i % 3 ? 'default' : other.slug })));
    const responses = await Promise.all(Array.from({ length: 6 }, () => t.request('DELETE', `${BASE}/${tokens[2]}`)));
    expect(responses.map((r) => r.status)).toEqual(Array(6).fill(200));
    await expectCountsRight();
    expect([await total(), await total('&status=archived'), await total('&workspace_id=other&type=cost')]).toEqual([27, 2, 5]);
  });

  it('follows writes made outside the service (the triggers count whatever writes)', async () => {
    const id = uuid();
    const [{ organisation_id: organisationId }] = await sql<{ organisation_id: string }>('select organisation_id from workspaces where id = ?', [other.workspaceId]);
    const before = await total('&workspace_id=other&type=cost');
    await sql(
      "insert into usage_limits_policies (id, organisation_id, workspace_id, name, type, status, conditions, group_by, credit_limit, created_at, updated_at) values (?, ?, ?, 'raw', 'cost', 'active', ?, ?, 1, ?, ?)",
      [id, organisationId, other.workspaceId, JSON.stringify(minimal.conditions), JSON.stringify(minimal.group_by), clock.now(), clock.now()],
    );
    expect(await total('&workspace_id=other&type=cost')).toBe(before + 1);
    await sql("update usage_limits_policies set type = 'tokens', name = 'raw again' where id = ?", [id]);
    expect(await total('&workspace_id=other&type=cost')).toBe(before);
    await expectCountsRight();
    await sql('delete from usage_limits_policies where id = ?', [id]);
    await expectCountsRight();
  });

  it('of another organisation is its own', async () => {
    const elsewhere = await createOtherOrganisation(t);
    expect(await total('', elsewhere.key)).toBe(0);
    expect((await t.request('POST', BASE, { body: { ...minimal, type: 'cost' }, key: elsewhere.key })).status).toBe(200);
    expect(await total('', elsewhere.key)).toBe(1);
    expect(await total()).toBe(27);
    await expectCountsRight();
  });
});

describe('pages', () => {
  let app: TestApp;
  const listClock = new ManualClock(new Date(T0));
  let ws: { workspaceId: string; slug: string; key: string };
  /** Every policy written here: id, its filters' values and when it was created. */
  const written: Array<{ id: string; type: string; workspace: string; status: string; at: number }> = [];

  beforeAll(async () => {
    // An app of its own, so the lists hold exactly what is written here.
    app = await createTestApp({}, { clock: listClock });
    ws = await createWorkspaceWithKey(app, 'Team');
    for (let i = 0; i < 23; i++) {
      const body = { ...minimal, name: `p${i}`, type: i % 3 ? 'tokens' : 'cost', workspace_id: i % 4 ? 'default' : ws.slug };
      const r = await app.request('POST', BASE, { body });
      expect(r.status, r.text).toBe(200);
      written.push({ id: r.body.id, type: body.type, workspace: body.workspace_id, status: 'active', at: listClock.now().getTime() });
      // Every third one shares its instant with the next: ties are ordered by id.
      if (i % 3 !== 1) listClock.advance(1000);
    }
    for (const i of [4, 11]) {
      expect((await app.request('DELETE', `${BASE}/${written[i].id}`)).status).toBe(200);
      written[i].status = 'archived';
    }
  });
  afterAll(() => app.close());

  /** The whole list of `match`, newest first, ties by id (descending). */
  const expected = (match: (p: (typeof written)[number]) => boolean) =>
    written.filter(match).sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1)).map((p) => p.id);

  it('every page of every size, from either end, is its slice of the whole list, under every filter', async () => {
    const filters: Array<[string, (p: (typeof written)[number]) => boolean, string?]> = [
      ['', (p) => p.status === 'active'],
      ['&type=cost', (p) => p.status === 'active' && p.type === 'cost'],
      ['&status=archived', (p) => p.status === 'archived'],
      ['&workspace_id=default&type=tokens', (p) => p.status === 'active' && p.workspace === 'default' && p.type === 'tokens'],
      ['', (p) => p.status === 'active' && p.workspace === ws.slug, ws.key],
    ];
    for (const [query, match, key] of filters) {
      const all = expected(match);
      for (const size of [1, 2, 3, 5, 7, 100]) {
        for (let page = 0; page <= Math.ceil(all.length / size); page++) {
          const r = await app.request('GET', `${BASE}?page_size=${size}&current_page=${page}${query}`, { key });
          expect(r.status, r.text).toBe(200);
          const where = `${query || '(no filter)'} ${key ? '(workspace key)' : ''} page_size=${size} current_page=${page}`;
          expect({ total: r.body.total, ids: r.body.data.map((p: { id: string }) => p.id) }, where).toEqual({ total: all.length, ids: all.slice(page * size, (page + 1) * size) });
        }
      }
    }
  });

  /** A page of `filter`'s list with anchors `every` positions apart (the service's are 1,000 apart: these lists are shorter). */
  const anchoredPage = async (filter: Omit<PolicyListFilter, 'organisationId'>, offset: number, limit: number, every: number) => {
    const [{ organisation_id: organisationId }] = await executeSql<Array<{ organisation_id: string }>>(app.app.runtime.fork(), 'select organisation_id from workspaces where id = ?', [ws.workspaceId]);
    const page = await policyPage(app.app.runtime, app.app.runtime.fork(), { organisationId, ...filter }, { offset, limit }, every);
    return { total: page.total, ids: page.data.map((p) => p.id) };
  };
  const eachPage = async (filter: Omit<PolicyListFilter, 'organisationId'>, match: (p: (typeof written)[number]) => boolean) => {
    const all = expected(match);
    for (const every of [1, 2, 3, 5]) {
      for (const size of [1, 2, 3, 7]) {
        for (let offset = 0; offset <= all.length; offset += size) {
          expect(await anchoredPage(filter, offset, size, every), `${JSON.stringify(filter)} every=${every} offset=${offset} size=${size}`).toEqual({
            total: all.length,
            ids: all.slice(offset, offset + size),
          });
        }
      }
    }
  };

  it('pages that start from page anchors are the slices offset paging gives, under every filter', async () => {
    await eachPage({ status: 'active' }, (p) => p.status === 'active');
    await eachPage({ status: 'active', type: 'cost' }, (p) => p.status === 'active' && p.type === 'cost');
    await eachPage({ status: 'archived' }, (p) => p.status === 'archived');
    await eachPage({ status: 'active', workspaceId: ws.workspaceId, type: 'tokens' }, (p) => p.status === 'active' && p.workspace === ws.slug && p.type === 'tokens');
  });

  it('after a policy is created, archived, or written outside the service, pages past an anchor are exact', async () => {
    const active = (p: (typeof written)[number]) => p.status === 'active';
    // Anchors built before each write (every 2, 3 positions) must not serve the list after it.
    await eachPage({ status: 'active' }, active);

    // Created: newer than all, so it shifts every later position by one.
    listClock.advance(1000);
    const r = await app.request('POST', BASE, { body: { ...minimal, name: 'late', type: 'tokens' } });
    expect(r.status, r.text).toBe(200);
    written.push({ id: r.body.id, type: 'tokens', workspace: 'default', status: 'active', at: listClock.now().getTime() });
    await eachPage({ status: 'active' }, active);

    // Archived: one in the middle leaves, the positions after it move up.
    const middle = expected(active)[7];
    expect((await app.request('DELETE', `${BASE}/${middle}`)).status).toBe(200);
    written.find((p) => p.id === middle)!.status = 'archived';
    await eachPage({ status: 'active' }, active);
    await eachPage({ status: 'archived' }, (p) => p.status === 'archived');

    // Archived outside the service (no invalidation): the total moves, so do the anchors used.
    const other = expected(active)[3];
    await executeSql(app.app.runtime.fork(), "update usage_limits_policies set status = 'archived' where id = ?", [other]);
    written.find((p) => p.id === other)!.status = 'archived';
    await eachPage({ status: 'active' }, active);
  });
});

it('no policy is counted for a page, and a page past an anchor walks from it', async () => {
  const [{ organisation_id: organisationId }] = await sql<{ organisation_id: string }>('select organisation_id from workspaces where id = ?', [other.workspaceId]);
  const count = await total();
  statements = [];
  const page = await policyPage(t.app.runtime, t.app.runtime.fork(), { organisationId, status: 'active' }, { offset: count - 2, limit: 2 }, 4);
  const seen = statements;
  statements = null;
  expect(page.data).toHaveLength(2);
  expect(seen.filter((s) => /usage_policy_counts/.test(s))).toHaveLength(1);
  expect(seen.filter((s) => /count\(/i.test(s) && /usage_limits_policies/.test(s))).toEqual([]);
  const walks = seen.filter((s) => /select id from usage_limits_policies/.test(s));
  expect(walks).toHaveLength(1);
  expect(walks[0]).toMatch(/\(created_at, id\) < /);
});
