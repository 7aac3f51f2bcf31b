import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, base64url, type CryptoKey, type JWK } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { createJwksCache } from '../../../src/modules/guardrails/checks/jwks-cache.js';
import { startJwksServer, type JwksServer } from './jwks-server.js';
import { runCheck } from './helpers.js';

interface KeyPair {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function makeKey(kid: string, alg = 'RS256'): Promise<KeyPair> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, jwk };
}

const nowSec = (clock: ManualClock) => Math.floor(clock.now().getTime() / 1000);

function sign(key: KeyPair, clock: ManualClock, claims: { iat?: number; exp?: number; kid?: string } = {}) {
  const now = nowSec(clock);
  return new SignJWT({ sub: 'user-1' })
    .setProtectedHeader({ alg: key.alg, kid: claims.kid ?? key.kid })
    .setIssuer('https://issuer.test')
    .setIssuedAt(claims.iat ?? now - 10)
    .setExpirationTime(claims.exp ?? now + 600)
    .sign(key.privateKey);
}

describe('default.jwt', () => {
  let server: JwksServer;
  let rsa: KeyPair;
  let ec: KeyPair;
  let clock: ManualClock;

  beforeAll(async () => {
    rsa = await makeKey('rsa-1');
    ec = await makeKey('ec-1', 'ES256');
    server = await startJwksServer([rsa.jwk, ec.jwk]);
  });
  afterAll(() => server.close());
  afterEach(() => {
    server.keys = [rsa.jwk, ec.jwk];
    server.delayMs = 0;
    server.hang = false;
  });

  const setup = (cacheOpts: Parameters<typeof createJwksCache>[0] = {}) => {
    clock = new ManualClock(new Date('2031-05-01T12:00:00Z'));
    const jwksCache = createJwksCache({ clock, ...cacheOpts });
    return { jwksCache, clock };
  };

  const check = (token: string | undefined, opts: { jwksCache: ReturnType<typeof createJwksCache>; clock: ManualClock }, params: Record<string, unknown> = {}) =>
    runCheck(
      'default.jwt',
      { jwksUri: server.url, headerKey: 'Authorization', ...params },
      { headers: token === undefined ? {} : { authorization: token } },
      opts,
    );

  it('accepts a valid token, with or without the Bearer prefix', async () => {
    const opts = setup();
    const token = await sign(rsa, opts.clock);
    const bare = await check(token, opts);
    expect(bare).toEqual({ verdict: true, explanation: 'JWT verified.', data: { alg: 'RS256', kid: 'rsa-1', iss: 'https://issuer.test', sub: 'user-1' } });
    expect((await check(`Bearer ${token}`, opts)).verdict).toBe(true);
    expect((await check(`bearer   ${token}`, opts)).verdict).toBe(true);
  });

  it('reads headerKey case-insensitively from lower-cased request headers', async () => {
    const opts = setup();
    const token = await sign(rsa, opts.clock);
    const result = await runCheck('default.jwt', { jwksUri: server.url, headerKey: 'X-Auth-Token' }, { headers: { 'x-auth-token': token } }, opts);
    expect(result.verdict).toBe(true);
  });

  it('fails on a missing or empty header', async () => {
    const opts = setup();
    const missing = await check(undefined, opts);
    expect(missing.verdict).toBe(false);
    expect(missing.explanation).toBe('Missing JWT: request header "Authorization" is absent or empty.');
    expect((await check('  ', opts)).verdict).toBe(false);
    expect(opts.jwksCache.fetches).toBe(0);
  });

  it('fails on a malformed token', async () => {
    const opts = setup();
    const result = await check('Bearer not-a-jwt', opts);
    expect(result.verdict).toBe(false);
    expect(result.data?.code).toBe('ERR_JWT_MALFORMED');
  });

  it('rejects an expired token, honouring clockTolerance', async () => {
    const opts = setup();
    const now = nowSec(opts.clock);
    const long = await check(await sign(rsa, opts.clock, { iat: now - 120, exp: now - 60 }), opts);
    expect(long.verdict).toBe(false);
    expect(long.data?.code).toBe('ERR_JWT_EXPIRED');
    expect(long.explanation).toBe('JWT rejected: token expired (beyond the 5 s clock tolerance).');

    const within = await sign(rsa, opts.clock, { iat: now - 120, exp: now - 3 });
    expect((await check(within, opts)).verdict).toBe(true);
    expect((await check(within, opts, { clockTolerance: 2 })).verdict).toBe(false);

    const beyond = await sign(rsa, opts.clock, { iat: now - 120, exp: now - 8 });
    expect((await check(beyond, opts)).data?.code).toBe('ERR_JWT_EXPIRED');
    expect((await check(beyond, opts, { clockTolerance: 10 })).verdict).toBe(true);
  });

  it('rejects a token issued longer than maxTokenAge ago', async () => {
    const opts = setup();
    const now = nowSec(opts.clock);
    const token = await sign(rsa, opts.clock, { iat: now - 2 * 3600, exp: now + 3600 });
    const old = await check(token, opts, { maxTokenAge: '1h' });
    expect(old.verdict).toBe(false);
    expect(old.explanation).toBe('JWT rejected: token issued more than maxTokenAge (1h) ago.');
    expect((await check(token, opts, { maxTokenAge: '3h' })).verdict).toBe(true);
    expect((await check(token, opts, { maxTokenAge: '90m' })).verdict).toBe(false);
    // Default 1d.
    const ancient = await sign(rsa, opts.clock, { iat: now - 2 * 86400, exp: now + 3600 });
    expect((await check(ancient, opts)).verdict).toBe(false);
  });

  it('rejects a token signed by another key under a published kid', async () => {
    const opts = setup();
    const impostor = await makeKey('rsa-1');
    const result = await check(await sign(impostor, opts.clock), opts);
    expect(result.verdict).toBe(false);
    expect(result.data?.code).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
    expect(result.explanation).toBe('JWT rejected: signature verification failed.');
  });

  it('rejects alg "none" without fetching keys', async () => {
    const opts = setup();
    const now = nowSec(opts.clock);
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT', kid: 'rsa-1' }));
    const payload = base64url.encode(JSON.stringify({ sub: 'admin', iat: now, exp: now + 600 }));
    const hitsBefore = server.hits;
    const result = await check(`Bearer ${header}.${payload}.`, opts, { algorithms: ['RS256'] });
    expect(result.verdict).toBe(false);
    expect(result.explanation).toBe('JWT rejected: unsecured tokens (alg "none") are never accepted.');
    expect(server.hits).toBe(hitsBefore);
  });

  it('rejects an algorithm outside `algorithms`, accepts it once listed', async () => {
    const opts = setup();
    const token = await sign(ec, opts.clock);
    const refused = await check(token, opts);
    expect(refused.verdict).toBe(false);
    expect(refused.data?.code).toBe('ERR_JOSE_ALG_NOT_ALLOWED');
    expect(refused.explanation).toBe('JWT rejected: algorithm "ES256" is not allowed (allowed: RS256).');
    expect((await check(token, opts, { algorithms: ['RS256', 'ES256'] })).verdict).toBe(true);
  });

  it('fails (never throws) when the JWKS server is down', async () => {
    const down = await startJwksServer([rsa.jwk]);
    const url = down.url;
    await down.close();
    const opts = setup();
    const result = await runCheck('default.jwt', { jwksUri: url, headerKey: 'authorization' }, { headers: { authorization: await sign(rsa, opts.clock) } }, opts);
    expect(result.verdict).toBe(false);
    expect(result.error).toBe('jwks_unavailable');
    expect(result.explanation).toMatch(/^JWT not verified: the JWKS at http:\/\/127\.0\.0\.1:\d+\/\.well-known\/jwks\.json is unavailable \(/);
  });

  it('fails when the JWKS server does not answer within the fetch timeout', async () => {
    server.hang = true;
    const opts = setup({ fetchTimeoutMs: 150 });
    const started = Date.now();
    const result = await check(await sign(rsa, opts.clock), opts);
    expect(result.verdict).toBe(false);
    expect(result.error).toBe('jwks_unavailable');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('fails when the JWKS endpoint answers with something that is not a key set', async () => {
    const bogus = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"hello":"world"}');
    });
    await new Promise<void>((r) => bogus.listen(0, '127.0.0.1', r));
    const opts = setup();
    const url = `http://127.0.0.1:${(bogus.address() as AddressInfo).port}/`;
    const result = await runCheck('default.jwt', { jwksUri: url, headerKey: 'authorization' }, { headers: { authorization: await sign(rsa, opts.clock) } }, opts);
    bogus.closeAllConnections();
    bogus.close();
    expect(result.verdict).toBe(false);
    expect(result.error).toBe('jwks_unavailable');
  });

  it('fails closed without a cache in opts', async () => {
    const c = new ManualClock();
    const result = await runCheck('default.jwt', { jwksUri: server.url, headerKey: 'authorization' }, { headers: { authorization: await sign(rsa, c) } }, {});
    expect(result.verdict).toBe(false);
    expect(result.explanation).toBe('default.jwt needs a JWKS cache (opts.jwksCache); none was provided.');
  });

  describe('cache', () => {
    it('fetches once for 50 concurrent evaluations, again only after cacheMaxAge', async () => {
      server.delayMs = 50; // keep the first fetch in flight while the others arrive
      const opts = setup();
      const token = await sign(rsa, opts.clock, { exp: nowSec(opts.clock) + 86400 });
      const before = server.hits;
      const results = await Promise.all(Array.from({ length: 50 }, () => check(token, opts, { cacheMaxAge: 60 })));
      expect(results.map((r) => r.verdict)).toEqual(Array(50).fill(true));
      expect(server.hits - before).toBe(1);
      expect(opts.jwksCache.fetches).toBe(1);

      opts.clock.advance(59_000);
      await Promise.all(Array.from({ length: 10 }, () => check(token, opts, { cacheMaxAge: 60 })));
      expect(server.hits - before).toBe(1);

      opts.clock.advance(1_000);
      const again = await Promise.all(Array.from({ length: 10 }, () => check(token, opts, { cacheMaxAge: 60 })));
      expect(again.every((r) => r.verdict)).toBe(true);
      expect(server.hits - before).toBe(2);
    });

    it('caches are per instance', async () => {
      const a = setup();
      const token = await sign(rsa, a.clock);
      const before = server.hits;
      await check(token, a);
      await check(token, setup());
      expect(server.hits - before).toBe(2);
    });

    it('an unknown kid triggers one rate-limited refresh (key rotation)', async () => {
      const opts = setup({ refreshCooldownMs: 30_000 });
      const before = server.hits;
      expect((await check(await sign(rsa, opts.clock), opts)).verdict).toBe(true);
      expect(server.hits - before).toBe(1);

      const rotated = await makeKey('rsa-2');
      server.keys = [rsa.jwk, rotated.jwk];

      // Keys fetched less than the cooldown ago: no refetch, the token fails.
      const tooSoon = await check(await sign(rotated, opts.clock), opts);
      expect(tooSoon.verdict).toBe(false);
      expect(tooSoon.explanation).toBe('JWT rejected: no key in the JWKS matches the token (kid "rsa-2", alg "RS256").');
      expect(server.hits - before).toBe(1);

      opts.clock.advance(31_000);
      const token2 = await sign(rotated, opts.clock);
      const results = await Promise.all(Array.from({ length: 20 }, () => check(token2, opts)));
      expect(results.every((r) => r.verdict)).toBe(true);
      expect(server.hits - before).toBe(2);

      // A kid that exists nowhere does not cause a fetch storm.
      const stranger = await makeKey('nobody');
      const misses = await Promise.all(Array.from({ length: 20 }, async () => check(await sign(stranger, opts.clock), opts)));
      expect(misses.every((r) => !r.verdict)).toBe(true);
      expect(server.hits - before).toBe(2);
    });

    it('backs off after a failed fetch instead of retrying on every request', async () => {
      const down = await startJwksServer([rsa.jwk]);
      const url = down.url;
      await down.close();
      const opts = setup({ failureBackoffMs: 1000 });
      const token = await sign(rsa, opts.clock);
      const run = () => runCheck('default.jwt', { jwksUri: url, headerKey: 'authorization' }, { headers: { authorization: token } }, opts);
      await run();
      await run();
      await run();
      expect(opts.jwksCache.fetches).toBe(1);
      opts.clock.advance(1000);
      await run();
      expect(opts.jwksCache.fetches).toBe(2);
    });
  });
});
