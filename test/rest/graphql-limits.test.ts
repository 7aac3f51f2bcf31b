import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

// Document errors carry the extensions every GraphQL error does (schema/document-errors-plugin.ts).
const COST_EXTENSIONS = { status: 400, type: 'invalid_request_error', param: null, code: 'graphql_validation_failed' };
const PARSE_EXTENSIONS = { code: 'GRAPHQL_PARSE_FAILED', status: 400, type: 'invalid_request_error', param: null };

// GraphQL protection (graphql-armor, configured in src/app.ts) with the limits README documents:
// cost 20000 (GRAPHQL_MAX_COST) and 5000 tokens (GRAPHQL_MAX_TOKENS) per document. Depth and
// aliases are covered in ops.test.ts. And GraphiQL, served at /graphql to a browser.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A POST /graphql with a chosen Accept header, as t.graphql does not let one set it. */
async function post(app: TestApp, query: string, accept?: string) {
  const response = await app.app.fetch(
    new Request('http://gatehouse.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': app.key, ...(accept ? { accept } : {}) },
      body: JSON.stringify({ query }),
    }),
  );
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.json() };
}

/**
 * graphql-armor's cost model, restated: a scalar costs 1, a field with a selection costs 2 plus
 * 1.5 × the cost of each selected field. `chain(levels, scalars)` is
 * `collection { childCollections { … { <scalars> } } }` with `levels` childCollections.
 */
function chain(levels: number, scalars: string[]): { query: string; cost: number; depth: number } {
  let inner = scalars.join(' ');
  let cost = 2 + 1.5 * scalars.length;
  for (let i = 0; i < levels; i++) {
    inner = `childCollections { ${inner} }`;
    cost = 2 + 1.5 * cost;
  }
  return { query: `{ collection(idOrSlug: "default") { ${inner} } }`, cost, depth: levels + 2 };
}

/** The README's tree read: `levels` levels, `name` and `details` at every one. */
function treeRead(levels: number): string {
  let inner = 'name details { childCollectionsCount promptsCount }';
  for (let i = 1; i < levels; i++) inner = `name details { childCollectionsCount promptsCount } childCollections { ${inner} }`;
  return `{ collection(idOrSlug: "default") { ${inner} } }`;
}

describe('GraphQL cost limit (GRAPHQL_MAX_COST, default 20000)', () => {
  it('a normal query passes', async () => {
    const res = await t.graphql('{ viewer { organisation { name } workspaces { slug name isDefault } } }');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: { viewer: { organisation: { name: 'Default organisation' }, workspaces: [{ slug: 'default', name: 'Default', isDefault: true }] } },
    });
  });

  it('the README tree reads fit: six levels, and fourteen (its stated maximum) within depth and cost', async () => {
    const six = await t.graphql(`query CollectionTree($id: String!) {
      collection(idOrSlug: $id) {
        name
        details { childCollectionsCount promptsCount childCollectionsLastUpdatedAt promptsLastUpdatedAt }
        prompts { name version }
        childCollections {
          name
          details { childCollectionsCount promptsCount }
          childCollections {
            name
            details { childCollectionsCount promptsCount }
            childCollections { name details { childCollectionsCount promptsCount } }
          }
        }
      }
    }`, { id: 'default' });
    expect(six.errors).toBeUndefined();
    expect(six.data.collection).toMatchObject({ name: 'Default', childCollections: [] });

    const fourteen = await t.graphql(treeRead(14));
    expect(fourteen.body).toEqual({ data: { collection: { name: 'Default', details: { childCollectionsCount: 0, promptsCount: 0 }, childCollections: [] } } });
  });

  it('a query over the cost (within depth, aliases and tokens) is refused with armor’s message', async () => {
    const scalars = ['id', 'name', 'slug', ...Array.from({ length: 60 }, () => 'name')];
    const { query, cost, depth } = chain(14, scalars);
    expect(depth).toBeLessThanOrEqual(16);
    expect(cost).toBeGreaterThan(20_000);
    const res = await post(t, query);
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^application\/json/);
    expect(res.body).toEqual({ errors: [{ message: `Syntax Error: Query Cost limit of 20000 exceeded, found ${cost}.`, extensions: COST_EXTENSIONS }] });

    // The same shape with fewer scalars stays under the limit and runs.
    const under = chain(14, ['id', 'name', 'slug']);
    expect(under.cost).toBeLessThan(20_000);
    const ok = await post(t, under.query);
    expect(ok.body).toEqual({ data: { collection: { childCollections: [] } } });
  });

  it('honours a configured GRAPHQL_MAX_COST exactly, and a refused mutation does not run', async () => {
    const low = await createTestApp({ GRAPHQL_MAX_COST: 4 });
    try {
      // { workspaces { id } } costs 2 + 1.5 = 3.5; with name too, 2 + 3 = 5.
      expect((await low.graphql('{ workspaces { id } }')).errors).toBeUndefined();
      expect((await low.graphql('{ workspaces { id name } }')).body).toEqual({ errors: [{ message: 'Syntax Error: Query Cost limit of 4 exceeded, found 5.', extensions: COST_EXTENSIONS }] });
      const refused = await low.graphql('mutation { createWorkspace(input: { name: "Costly" }) { id name } }');
      expect(refused.body).toEqual({ errors: [{ message: 'Syntax Error: Query Cost limit of 4 exceeded, found 5.', extensions: COST_EXTENSIONS }] });
      const workspaces = await low.request('GET', '/v1/admin/workspaces');
      expect(workspaces.body.data.map((w: { slug: string }) => w.slug)).toEqual(['default']);
      const cheap = await low.graphql('mutation { createWorkspace(input: { name: "Cheap" }) { id } }');
      expect(cheap.errors).toBeUndefined();
    } finally {
      await low.close();
    }
  });
});

describe('GraphQL token limit (GRAPHQL_MAX_TOKENS, default 5000)', () => {
  it('a document of more than 5000 tokens is refused with armor’s message', async () => {
    // `{ workspaces { id × 4999 } }`: 5004 tokens.
    const query = `{ workspaces { ${Array.from({ length: 4999 }, () => 'id').join(' ')} } }`;
    const expected = { errors: [{ message: 'Syntax Error: Token limit of 5000 exceeded.', extensions: PARSE_EXTENSIONS }] };
    const res = await post(t, query);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected);
    const strict = await post(t, query, 'application/graphql-response+json');
    expect(strict.status).toBe(400);
    expect(strict.body).toEqual(expected);
  });

  it('a refused mutation does not run', async () => {
    const query = `mutation { createWorkspace(input: { name: "Wordy" }) { ${Array.from({ length: 5000 }, () => 'id').join(' ')} } }`;
    expect((await t.graphql(query)).body).toEqual({
      errors: [{ message: 'Syntax Error: Token limit of 5000 exceeded.', extensions: PARSE_EXTENSIONS }],
    });
    const workspaces = await t.request('GET', '/v1/admin/workspaces');
    expect(workspaces.body.data.map((w: { slug: string }) => w.slug)).toEqual(['default']);
  });

  it('honours a configured GRAPHQL_MAX_TOKENS exactly', async () => {
    const few = await createTestApp({ GRAPHQL_MAX_TOKENS: 6 });
    try {
      // `{ workspaces { id } }` is 6 tokens; adding `name` makes 7.
      const six = await few.graphql('{ workspaces { slug } }');
      expect(six.body).toEqual({ data: { workspaces: [{ slug: 'default' }] } });
      expect((await few.graphql('{ workspaces { slug name } }')).body).toEqual({
        errors: [{ message: 'Syntax Error: Token limit of 6 exceeded.', extensions: PARSE_EXTENSIONS }],
      });
    } finally {
      await few.close();
    }
  });
});

describe('GraphiQL', () => {
  it('GET /graphql from a browser (Accept: text/html) answers the GraphiQL page, no key needed', async () => {
    const res = await t.request('GET', '/graphql', { key: null, headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('x-gateway-request-id')).toBeTruthy();
    expect(res.text).toMatch(/^<!doctype html>/i);
    expect(res.text).toContain('<title>Gatehouse</title>');
    expect(res.text).toContain('GraphiQL');
    expect(res.text).toContain('YogaGraphiQL.renderYogaGraphiQL');
    // Subscriptions from the page go over graphql-sse, as the server speaks it.
    expect(res.text).toContain('"subscriptionsProtocol":"GRAPHQL_SSE"');
  });

  it('a JSON client on the same path still gets GraphQL, not the page', async () => {
    const res = await post(t, '{ workspaces { slug } }', 'application/json');
    expect(res.contentType).toMatch(/^application\/json/);
    expect(res.body).toEqual({ data: { workspaces: [{ slug: 'default' }] } });
  });
});

describe('document errors', () => {
  it('a validation or syntax error carries status, type, param and code like every other error; the HTTP status stays 200 for application/json', async () => {
    const invalid = await t.graphql('{ nope }');
    expect(invalid.status).toBe(200);
    expect(invalid.body).toEqual({
      errors: [
        {
          message: 'Cannot query field "nope" on type "Query".',
          locations: [{ line: 1, column: 3 }],
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED', status: 400, type: 'invalid_request_error', param: null },
        },
      ],
    });
    const broken = await t.graphql('{ viewer { ');
    expect(broken.body.errors[0]).toMatchObject({
      message: 'Syntax Error: Expected Name, found <EOF>.',
      extensions: { code: 'GRAPHQL_PARSE_FAILED', status: 400, type: 'invalid_request_error', param: null },
    });
    // Errors from execution keep their own extensions.
    const missing = await t.graphql('{ workspace(idOrSlug: "nope") { id } }');
    expect(missing.body.errors[0].extensions).toMatchObject({ status: 404, type: 'invalid_request_error' });
  });
});
