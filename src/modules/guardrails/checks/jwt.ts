import { decodeProtectedHeader, jwtVerify, type JWTPayload, type ProtectedHeaderParameters } from 'jose';
import { z } from 'zod';
import { defineCheck, errorMessage, type CheckResult } from './check.js';
import { DURATION_PATTERN, parseDurationSeconds } from './duration.js';
import type { JwksEntry } from './jwks-cache.js';

/** Asymmetric algorithms only: HMAC keys cannot come from a public JWKS, and "none" is never a signature. */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;

function isHttpUrl(u: string): boolean {
  try {
    return /^https?:$/.test(new URL(u).protocol);
  } catch {
    return false;
  }
}

const parameters = z.object({
  jwksUri: z
    .string({ required_error: 'is required' })
    .refine(isHttpUrl, 'must be an absolute http or https URL'),
  headerKey: z
    .string({ required_error: 'is required' })
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name'),
  cacheMaxAge: z.number().int().min(1).max(31_536_000).default(86400),
  clockTolerance: z.number().int().min(0).max(86400).default(5),
  maxTokenAge: z
    .string()
    .regex(DURATION_PATTERN, 'must be a duration such as 30s, 15m, 2h or 1d')
    .refine((d) => parseDurationSeconds(d)! > 0, 'must be longer than 0')
    .default('1d'),
  algorithms: z
    .array(z.enum(JWT_ALGORITHMS, { errorMap: () => ({ message: `must be one of ${JWT_ALGORITHMS.join(', ')}` }) }))
    .min(1, 'must list at least one algorithm')
    .default(['RS256']),
});

type JwtParams = z.output<typeof parameters>;

const fail = (explanation: string, data: Record<string, unknown> = {}, error?: string): CheckResult => ({
  verdict: false,
  explanation,
  data,
  ...(error ? { error } : {}),
});

const codeOf = (e: unknown) => (e as { code?: string }).code;

function reason(e: unknown, header: ProtectedHeaderParameters, p: JwtParams): string {
  switch (codeOf(e)) {
    case 'ERR_JWT_EXPIRED':
      // jose reports maxTokenAge as an expiry of the "iat" claim.
      if ((e as { claim?: string }).claim === 'iat') return `token issued more than maxTokenAge (${p.maxTokenAge}) ago`;
      return `token expired (beyond the ${p.clockTolerance} s clock tolerance)`;
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return `algorithm "${header.alg}" is not allowed (allowed: ${p.algorithms.join(', ')})`;
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'signature verification failed';
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return `no key in the JWKS matches the token (kid ${header.kid ? `"${header.kid}"` : 'absent'}, alg "${header.alg}")`;
    default:
      return errorMessage(e);
  }
}

export const jwt = defineCheck('default.jwt', parameters, async (p, ctx, opts) => {
  const raw = ctx.headers[p.headerKey.toLowerCase()];
  if (!raw?.trim()) return fail(`Missing JWT: request header "${p.headerKey}" is absent or empty.`);
  const token = raw.trim().replace(/^Bearer\s+/i, '');

  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch (e) {
    return fail(`JWT rejected: malformed token (${errorMessage(e)}).`, { code: 'ERR_JWT_MALFORMED' });
  }
  // jose would refuse it too (not in `algorithms`); said explicitly because it is the classic attack.
  if (header.alg === 'none') return fail('JWT rejected: unsecured tokens (alg "none") are never accepted.', { code: 'ERR_JOSE_ALG_NOT_ALLOWED', alg: 'none' });

  const cache = opts.jwksCache;
  if (!cache) return fail('default.jwt needs a JWKS cache (opts.jwksCache); none was provided.');

  let keys: JwksEntry;
  try {
    keys = await cache.get(p.jwksUri, p.cacheMaxAge);
  } catch (e) {
    return fail(`JWT not verified: the JWKS at ${p.jwksUri} is unavailable (${errorMessage(e)}).`, { code: 'ERR_JWKS_UNAVAILABLE' }, 'jwks_unavailable');
  }

  const verifyOptions = {
    algorithms: [...p.algorithms],
    clockTolerance: p.clockTolerance,
    maxTokenAge: parseDurationSeconds(p.maxTokenAge)!,
    currentDate: opts.clock?.now(),
  };
  const verify = (entry: JwksEntry) => jwtVerify(token, entry.getKey, verifyOptions);
  const rejected = (e: unknown) => fail(`JWT rejected: ${reason(e, header, p)}.`, { code: codeOf(e), alg: header.alg, kid: header.kid });

  let payload: JWTPayload;
  try {
    payload = (await verify(keys)).payload;
  } catch (e) {
    if (codeOf(e) !== 'ERR_JWKS_NO_MATCHING_KEY') return rejected(e);
    // Unknown kid: the issuer may have rotated keys since we fetched. One rate-limited refetch.
    let fresh: JwksEntry | undefined;
    try {
      fresh = await cache.refreshAfterMiss(p.jwksUri, keys);
    } catch (refreshError) {
      return fail(`JWT rejected: ${reason(e, header, p)}; refreshing the JWKS failed (${errorMessage(refreshError)}).`, { code: codeOf(e), kid: header.kid }, 'jwks_unavailable');
    }
    if (!fresh) return rejected(e);
    try {
      payload = (await verify(fresh)).payload;
    } catch (e2) {
      return rejected(e2);
    }
  }
  return {
    verdict: true,
    explanation: 'JWT verified.',
    data: { alg: header.alg, kid: header.kid, iss: payload.iss, sub: payload.sub },
  };
});
