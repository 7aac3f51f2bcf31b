import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { evaluateForRequest, guardrailDeniedError, jwksCacheOf, type EvaluateForRequestInput } from '../../../src/modules/guardrails/evaluation.service.js';
import { toExtensions } from '../../../src/errors.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createOtherOrganisation, createWorkspaceWithKey } from '../../helpers/tenants.js';
import { startJwksServer, type JwksServer } from './jwks-server.js';

/**
 * The evaluation engine the data plane calls: real guardrails stored through the API, a real JWKS
 * server on 127.0.0.1, tokens signed in the test, evaluations read back through GraphQL.
 */
const T0 = new Date('2031-05-01T12:00:00.000Z');

interface KeyPair {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function makeKey(kid: string): Promise<KeyPair> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

let t: TestApp;
let clock: ManualClock;
let server: JwksServer;
let key: KeyPair;
let orgId: string;
let defaultWs: string;

const nowSec = () => Math.floor(clock.now().getTime() / 1000);

function sign(k: KeyPair, claims: { iat?: number; exp?: number } = {}) {
  return new SignJWT({ sub: 'user-1' })
    .setProtectedHeader({ alg: 'RS256', kid: k.kid })
    .setIssuer('https://issuer.test')
    .setIssuedAt(claims.iat ?? nowSec() - 10)
    .setExpirationTime(claims.exp ?? nowSec() + 600)
    .sign(k.privateKey);
}

const jwtCheck = (uri = server.url) => ({ id: 'default.jwt', name: 'JWT', parameters: { jwksUri: uri, headerKey: 'Authorization' } });

async function guardrail(body: Record<string, unknown>, apiKey?: string) {
  const res = await t.request('POST', '/v1/guardrails', { body, key: apiKey });
  if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body as { id: string; slug: string; version_id: string };
}

function input(refs: string[], ctx: Partial<EvaluateForRequestInput> & { headers?: Record<string, string>; text?: string } = {}): EvaluateForRequestInput {
  const { headers = {}, text = '', ...rest } = ctx;
  return { organisationId: orgId, workspaceId: defaultWs, guardrailRefs: refs, stage: 'input', context: { text, headers }, ...rest };
}

const evaluationsQuery = `query($runId: String, $requestId: String, $guardrailId: String) {
  guardrailEvaluations(runId: $runId, requestId: $requestId, guardrailId: $guardrailId) {
    total
    data {
      id guardrailId versionId workspaceId stage verdict deny async durationMs runId requestId createdAt
      checks { id name verdict explanation durationMs data error }
      feedback { value weight metadata }
    }
  }
}`;

beforeAll(async () => {
  clock = new ManualClock(T0);
  t = await createTestApp({}, { clock });
  key = await makeKey('rsa-1');
  server = await startJwksServer([key.jwk]);
  const viewer = await t.graphql('{ viewer { organisation { id } } workspaces { id isDefault } }');
  orgId = viewer.data.viewer.organisation.id;
  defaultWs = viewer.data.workspaces.find((w: { isDefault: boolean }) => w.isDefault).id;
});
afterAll(async () => {
  await t.close();
  await server.close();
});

describe('evaluateForRequest: default.jwt against a real JWKS server', () => {
  it('a valid token passes; the result and the stored evaluation say so', async () => {
    const g = await guardrail({ name: 'JWT gate', checks: [jwtCheck()], actions: { deny: true } });
    const token = await sign(key);
    const out = await evaluateForRequest(t.app.runtime, input([g.slug], { headers: { authorization: `Bearer ${token}` }, runId: 'run_valid', requestId: 'req_valid' }));
    expect(out.verdict).toBe(true);
    expect(out.deny).toBe(false);
    expect(out.missing).toEqual([]);
    expect(out.skipped).toEqual([]);
    expect(out.pendingAsync).toEqual([]);
    expect(out.results).toEqual([
      {
        id: g.id,
        slug: g.slug,
        name: 'JWT gate',
        version_id: g.version_id,
        verdict: true,
        deny: false,
        async: false,
        checks: [
          {
            id: 'default.jwt',
            name: 'JWT',
            verdict: true,
            explanation: 'JWT verified.',
            duration_ms: expect.any(Number),
            data: { alg: 'RS256', kid: 'rsa-1', iss: 'https://issuer.test', sub: 'user-1' },
          },
        ],
        feedback: { value: 5, weight: 1, metadata: '' },
        duration_ms: expect.any(Number),
        evaluation_id: expect.any(String),
      },
    ]);

    const stored = await t.graphql(evaluationsQuery, { runId: 'run_valid' });
    expect(stored.errors).toBeUndefined();
    expect(stored.data.guardrailEvaluations).toEqual({
      total: 1,
      data: [
        {
          id: out.results[0]!.evaluation_id,
          guardrailId: g.id,
          versionId: g.version_id,
          workspaceId: defaultWs,
          stage: 'input',
          verdict: true,
          deny: false,
          async: false,
          durationMs: out.results[0]!.duration_ms,
          runId: 'run_valid',
          requestId: 'req_valid',
          createdAt: T0.toISOString(),
          checks: [
            {
              id: 'default.jwt',
              name: 'JWT',
              verdict: true,
              explanation: 'JWT verified.',
              durationMs: out.results[0]!.checks[0]!.duration_ms,
              data: { alg: 'RS256', kid: 'rsa-1', iss: 'https://issuer.test', sub: 'user-1' },
              error: null,
            },
          ],
          feedback: { value: 5, weight: 1, metadata: '' },
        },
      ],
    });
  });

  it('deny vs non-deny: the same expired token denies with deny: true and only flags without it', async () => {
    const strict = await guardrail({ name: 'Strict', checks: [jwtCheck()], actions: { deny: true, on_fail: { feedback: { value: -9, metadata: 'expired' } } } });
    const soft = await guardrail({ name: 'Soft', checks: [jwtCheck()] });
    const expired = await sign(key, { iat: nowSec() - 120, exp: nowSec() - 60 });
    const headers = { authorization: expired };

    const denied = await evaluateForRequest(t.app.runtime, input([strict.id], { headers, requestId: 'req_strict' }));
    expect(denied.verdict).toBe(false);
    expect(denied.deny).toBe(true);
    expect(denied.results[0]).toMatchObject({
      id: strict.id,
      verdict: false,
      deny: true,
      feedback: { value: -9, weight: 1, metadata: 'expired' },
      checks: [{ id: 'default.jwt', verdict: false, explanation: 'JWT rejected: token expired (beyond the 5 s clock tolerance).' }],
    });
    const error = guardrailDeniedError(denied);
    expect(toExtensions(error)).toEqual({
      status: 446,
      type: 'guardrail_error',
      param: null,
      code: 'guardrail_denied',
      headers: {},
      extra: { guardrail_results: denied.results },
    });
    expect(error.message).toBe(`The request was denied by guardrail 'Strict' (${strict.slug}).`);

    const flagged = await evaluateForRequest(t.app.runtime, input([soft.slug], { headers }));
    expect(flagged.verdict).toBe(false);
    expect(flagged.deny).toBe(false);
    expect(flagged.results[0]).toMatchObject({ verdict: false, deny: false, feedback: { value: -5, weight: 1, metadata: '' } });

    const both = await evaluateForRequest(t.app.runtime, input([soft.slug, strict.slug], { headers }));
    expect(both.results.map((r) => r.slug)).toEqual([soft.slug, strict.slug]);
    expect(both.deny).toBe(true);
  });

  it('a token signed by another key under the published kid is refused', async () => {
    const g = await guardrail({ name: 'Sig', checks: [jwtCheck()], actions: { deny: true } });
    const impostor = await makeKey('rsa-1');
    const out = await evaluateForRequest(t.app.runtime, input([g.id], { headers: { authorization: await sign(impostor) } }));
    expect(out.deny).toBe(true);
    expect(out.results[0]!.checks[0]!.explanation).toBe('JWT rejected: signature verification failed.');
  });

  it('an unreachable JWKS fails closed', async () => {
    const down = await startJwksServer([key.jwk]);
    const uri = down.url;
    await down.close();
    const g = await guardrail({ name: 'Down', checks: [jwtCheck(uri)], actions: { deny: true } });
    const out = await evaluateForRequest(t.app.runtime, input([g.id], { headers: { authorization: await sign(key) } }));
    expect(out.deny).toBe(true);
    expect(out.results[0]!.checks[0]).toMatchObject({ verdict: false, error: 'jwks_unavailable' });
  });

  it('one JWKS cache per app: concurrent evaluations cost one fetch per cache period', async () => {
    const own = await startJwksServer([key.jwk]);
    try {
      const g = await guardrail({ name: 'Cached', checks: [{ ...jwtCheck(own.url), parameters: { jwksUri: own.url, headerKey: 'Authorization', cacheMaxAge: 60 } }] });
      const headers = { authorization: await sign(key) };
      const runs = await Promise.all(Array.from({ length: 8 }, () => evaluateForRequest(t.app.runtime, input([g.id], { headers }))));
      expect(runs.every((r) => r.verdict)).toBe(true);
      expect(own.hits).toBe(1);
      expect(jwksCacheOf(t.app.runtime)).toBe(jwksCacheOf(t.app.runtime));
      clock.advance(61_000);
      const later = await evaluateForRequest(t.app.runtime, input([g.id], { headers: { authorization: await sign(key) } }));
      expect(later.verdict).toBe(true);
      expect(own.hits).toBe(2);
    } finally {
      await own.close();
    }
  });
});

describe('evaluateForRequest: actions, versions, refs', () => {
  it('async guardrails never block: evaluated and recorded only when runAsync is called', async () => {
    const sync = await guardrail({ name: 'Sync', checks: [{ id: 'default.wordCount', parameters: { maxWords: 100 } }] });
    const later = await guardrail({ name: 'Later', checks: [{ id: 'default.wordCount', parameters: { maxWords: 1 } }], actions: { async: true, deny: true } });
    const out = await evaluateForRequest(t.app.runtime, input([later.slug, sync.slug], { text: 'three little words', runId: 'run_async', stage: 'output' }));
    expect(out.verdict).toBe(true);
    expect(out.deny).toBe(false);
    expect(out.results.map((r) => r.id)).toEqual([sync.id]);
    expect(out.pendingAsync).toEqual([later.id]);
    expect((await t.graphql(evaluationsQuery, { runId: 'run_async' })).data.guardrailEvaluations.total).toBe(1);

    const first = out.runAsync();
    expect(out.runAsync()).toBe(first);
    const asyncResults = await first;
    expect(asyncResults).toEqual([
      expect.objectContaining({ id: later.id, verdict: false, deny: true, async: true, feedback: { value: -5, weight: 1, metadata: '' } }),
    ]);
    const stored = await t.graphql(evaluationsQuery, { runId: 'run_async' });
    expect(stored.data.guardrailEvaluations.total).toBe(2);
    const byGuardrail = Object.fromEntries(stored.data.guardrailEvaluations.data.map((e: { guardrailId: string }) => [e.guardrailId, e]));
    expect(byGuardrail[later.id]).toMatchObject({ stage: 'output', verdict: false, deny: true, async: true, checks: [{ id: 'default.wordCount', verdict: false }] });
    expect(byGuardrail[sync.id]).toMatchObject({ stage: 'output', verdict: true, async: false });
  });

  it('runAsync with nothing pending resolves to [] and records nothing', async () => {
    const out = await evaluateForRequest(t.app.runtime, input([], { runId: 'run_empty' }));
    expect(out).toMatchObject({ verdict: true, deny: false, results: [], missing: [], skipped: [], pendingAsync: [] });
    expect(await out.runAsync()).toEqual([]);
    expect((await t.graphql(evaluationsQuery, { runId: 'run_empty' })).data.guardrailEvaluations.total).toBe(0);
  });

  it('evaluates the latest version and records which one ran', async () => {
    const g = await guardrail({ name: 'Evolving', checks: [{ id: 'default.contains', parameters: { words: ['alpha'] } }] });
    const v1 = await evaluateForRequest(t.app.runtime, input([g.id], { text: 'alpha', runId: 'run_versions' }));
    expect(v1.results[0]).toMatchObject({ version_id: g.version_id, verdict: true });
    const updated = await t.request('PUT', `/v1/guardrails/${g.id}`, { body: { checks: [{ id: 'default.contains', parameters: { words: ['beta'] } }] } });
    const v2 = await evaluateForRequest(t.app.runtime, input([g.slug], { text: 'alpha', runId: 'run_versions' }));
    expect(v2.results[0]).toMatchObject({ version_id: updated.body.version_id, verdict: false });
    const stored = await t.graphql(evaluationsQuery, { guardrailId: g.slug });
    expect(stored.data.guardrailEvaluations.data.map((e: { versionId: string }) => e.versionId).sort()).toEqual([g.version_id, updated.body.version_id].sort());
  });

  it('the same refs see every write at once (their lookup is cached): a new version, then the archive', async () => {
    const g = await guardrail({ name: 'Cached', checks: [{ id: 'default.contains', parameters: { words: ['alpha'] } }] });
    const refs = [g.slug];
    expect((await evaluateForRequest(t.app.runtime, input(refs, { text: 'alpha' }))).results[0]).toMatchObject({ version_id: g.version_id, verdict: true });
    const updated = await t.request('PUT', `/v1/guardrails/${g.id}`, { body: { checks: [{ id: 'default.contains', parameters: { words: ['beta'] } }] } });
    expect((await evaluateForRequest(t.app.runtime, input(refs, { text: 'alpha' }))).results[0]).toMatchObject({ version_id: updated.body.version_id, verdict: false });
    await t.request('DELETE', `/v1/guardrails/${g.id}`);
    const out = await evaluateForRequest(t.app.runtime, input(refs, { text: 'alpha' }));
    expect({ results: out.results, skipped: out.skipped }).toEqual({ results: [], skipped: [{ ref: g.slug, id: g.id, slug: g.slug, reason: 'archived' }] });
  });

  it('unknown refs fail closed; archived guardrails are skipped; a guardrail named twice runs once', async () => {
    const live = await guardrail({ name: 'Live', checks: [{ id: 'default.wordCount', parameters: { maxWords: 100 } }] });
    const gone = await guardrail({ name: 'Gone', checks: [{ id: 'default.wordCount', parameters: { maxWords: 0 } }], actions: { deny: true } });
    await t.request('DELETE', `/v1/guardrails/${gone.id}`);

    const out = await evaluateForRequest(t.app.runtime, input([live.id, live.slug, gone.slug, 'guard_typo'], { text: 'hi' }));
    expect(out.results.map((r) => r.id)).toEqual([live.id]);
    expect(out.skipped).toEqual([{ ref: gone.slug, id: gone.id, slug: gone.slug, reason: 'archived' }]);
    expect(out.missing).toEqual(['guard_typo']);
    expect(out.verdict).toBe(false);
    expect(out.deny).toBe(true);
    expect(guardrailDeniedError(out).message).toBe("The request was denied by guardrail 'guard_typo' (not found).");

    const withoutTypo = await evaluateForRequest(t.app.runtime, input([live.id, gone.slug], { text: 'hi' }));
    expect(withoutTypo).toMatchObject({ verdict: true, deny: false, missing: [] });
  });

  it("tenancy: another workspace's or organisation's guardrail is missing for this request", async () => {
    const b = await createWorkspaceWithKey(t, 'Engine B');
    const inB = await guardrail({ name: 'B only', checks: [{ id: 'default.wordCount', parameters: { maxWords: 100 } }] }, b.key);
    const other = await createOtherOrganisation(t, 'Engine rivals');
    const theirs = await t.request('POST', '/v1/guardrails', { key: other.key, body: { name: 'Theirs', checks: [{ id: 'default.wordCount', parameters: { maxWords: 100 } }] } });

    const fromDefault = await evaluateForRequest(t.app.runtime, input([inB.id, theirs.body.slug], { text: 'x' }));
    expect(fromDefault.missing).toEqual([inB.id, theirs.body.slug]);
    expect(fromDefault.deny).toBe(true);

    const fromB = await evaluateForRequest(t.app.runtime, input([inB.id], { text: 'x', workspaceId: b.workspaceId, requestId: 'req_in_b' }));
    expect(fromB).toMatchObject({ verdict: true, deny: false, missing: [] });

    // Evaluations follow the request's workspace: B's key sees them, the other organisation does not.
    expect((await t.graphql(evaluationsQuery, { requestId: 'req_in_b' }, b.key)).data.guardrailEvaluations.total).toBe(1);
    expect((await t.graphql(evaluationsQuery, { requestId: 'req_in_b' }, other.key)).data.guardrailEvaluations.total).toBe(0);
    const a = await createWorkspaceWithKey(t, 'Engine A');
    expect((await t.graphql(evaluationsQuery, { requestId: 'req_in_b' }, a.key)).data.guardrailEvaluations.total).toBe(0);
    const hidden = await t.graphql(evaluationsQuery, { guardrailId: inB.id }, a.key);
    expect(hidden.errors?.[0].message).toBe(`Guardrail not found: '${inB.id}'.`);
  });
});
