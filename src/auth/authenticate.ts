import { AuthenticationError } from '../errors.js';
import { ApiKeySchema } from '../modules/tenancy/api-key.entity.js';
import type { Runtime } from '../runtime.js';
import { apiKeyFromHeaders, hashApiKey } from './api-keys.js';
import type { Principal } from './principal.js';

const LAST_USED_RESOLUTION_MS = 60_000;
const lastUsedWrites = new WeakMap<Runtime, Map<string, number>>();

/** Resolves the request's API key to a principal (docs/contract.md#authentication-and-workspaces), from the cache when it can. */
export async function authenticate(runtime: Runtime, headers: Headers): Promise<Principal> {
  const key = apiKeyFromHeaders(headers);
  if (!key) throw new AuthenticationError('Missing API key: send it in the x-gateway-api-key header.');
  const hash = hashApiKey(key);
  const now = runtime.clock.now().getTime();
  let principal = runtime.apiKeys.get(hash, now);
  if (principal === undefined) {
    const generation = runtime.apiKeys.generation;
    const record = await runtime.fork().findOne(ApiKeySchema, { keyHash: hash, status: 'active' });
    principal = record
      ? { apiKeyId: record.id, organisationId: record.organisationId, type: record.type, workspaceId: record.workspaceId ?? null }
      : null;
    runtime.apiKeys.set(hash, principal, now, generation);
  }
  if (!principal) throw new AuthenticationError('Invalid API key.');
  touchLastUsed(runtime, principal.apiKeyId, now);
  return principal;
}

/** Records last use at minute resolution, off the request path, so reads stay free of writes. */
function touchLastUsed(runtime: Runtime, apiKeyId: string, now: number): void {
  let writes = lastUsedWrites.get(runtime);
  if (!writes) lastUsedWrites.set(runtime, (writes = new Map()));
  if (now - (writes.get(apiKeyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
  writes.set(apiKeyId, now);
  runtime
    .fork()
    .nativeUpdate(ApiKeySchema, { id: apiKeyId }, { lastUsedAt: new Date(now) })
    .catch((error: unknown) => runtime.logger.warn({ err: error }, 'could not record API key use'));
}
