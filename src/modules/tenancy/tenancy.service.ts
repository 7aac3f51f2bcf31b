import type { EntityManager } from '@mikro-orm/core';
import { displayPrefix, generateApiKey, hashApiKey } from '../../auth/api-keys.js';
import { resolveWorkspace } from '../../auth/tenancy.js';
import type { ServiceContext } from '../../context.js';
import { BadRequestError, ConflictError, NotFoundError, PermissionError } from '../../errors.js';
import { configCache } from '../../lib/config-cache.js';
import { parseContract } from '../../lib/contract.js';
import { isUuid, slugify, uuid } from '../../lib/ids.js';
import { retryOnSlugConflict } from '../../lib/slug-retry.js';
import type { Runtime } from '../../runtime.js';
import { ApiKeySchema, type ApiKey, type ApiKeyType } from './api-key.entity.js';
import { OrganisationSchema, type Organisation } from './organisation.entity.js';
import { createApiKeyContract, createWorkspaceContract, type CreateApiKeyInput, type CreateWorkspaceInput } from './tenancy.contract.js';
import { WorkspaceSchema, type Workspace } from './workspace.entity.js';

export { SLUG_PATTERN } from './tenancy.contract.js';
const NAME_MAX = 255;

export function validateName(name: unknown, param = 'name'): string {
  if (typeof name !== 'string' || !name.trim()) throw new BadRequestError(`'${param}' must be a non-empty string.`, { param });
  if (name.length > NAME_MAX) throw new BadRequestError(`'${param}' must be at most ${NAME_MAX} characters.`, { param });
  return name.trim();
}

/**
 * Creates a workspace and lets every domain add what a workspace starts with (its default
 * collection, its access to integrations) in the same transaction: all of it or none of it.
 * A given slug is the caller's (checked by createWorkspaceContract) or the bootstrap's.
 */
export async function insertWorkspace(
  em: EntityManager,
  runtime: Runtime,
  input: { organisationId: string; name: string; slug?: string | null; description?: string | null; isDefault?: boolean },
): Promise<Workspace> {
  const name = validateName(input.name);
  let slug: string;
  if (input.slug != null) {
    slug = input.slug;
    if (await em.count(WorkspaceSchema, { organisationId: input.organisationId, slug })) {
      throw new ConflictError(`A workspace with slug '${slug}' already exists.`, { param: 'slug' });
    }
  } else {
    slug = await uniqueWorkspaceSlug(em, input.organisationId, slugify(name, 'workspace'));
  }
  const now = runtime.clock.now();
  const workspace = em.create(WorkspaceSchema, {
    id: uuid(),
    organisationId: input.organisationId,
    slug,
    name,
    description: input.description ?? null,
    isDefault: input.isDefault ?? false,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  for (const module of runtime.modules) await module.onWorkspaceCreated?.(em, workspace, runtime);
  await em.flush();
  return workspace;
}

async function uniqueWorkspaceSlug(em: EntityManager, organisationId: string, base: string): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!(await em.count(WorkspaceSchema, { organisationId, slug: candidate }))) return candidate;
  }
}

/**
 * The tenancy operations parse their contract here rather than in the resolver: the CLI calls
 * them too, and gets the same refusals as both front doors.
 */
export async function createWorkspace(ctx: ServiceContext, raw: CreateWorkspaceInput): Promise<Workspace> {
  const input = parseContract(createWorkspaceContract, raw);
  ctx.scope.requireOrganisationKey();
  // The slug is picked inside the insert's transaction (see retryOnSlugConflict).
  const workspace = await retryOnSlugConflict(() => ctx.em.transactional((em) => insertWorkspace(em, ctx.runtime, { ...input, organisationId: ctx.principal.organisationId })));
  configCache(ctx.runtime).invalidate('workspaces');
  // Told once committed: a subscriber reads the workspace on a connection of its own (PostgreSQL),
  // and a transaction retried after a slug conflict must not announce its rolled-back attempt.
  ctx.runtime.pubsub.publish(`workspaceEvents:${workspace.organisationId}`, { type: 'created', workspaceId: workspace.id });
  return workspace;
}

export async function listWorkspaces(ctx: ServiceContext): Promise<Workspace[]> {
  const own = ctx.scope.ownWorkspaceId;
  return ctx.em.find(WorkspaceSchema, own ? { id: own } : { organisationId: ctx.scope.organisationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function getWorkspace(ctx: ServiceContext, idOrSlug: string): Promise<Workspace> {
  return resolveWorkspace(ctx.em, ctx.principal, idOrSlug, 'id');
}

export async function getOrganisation(ctx: ServiceContext): Promise<Organisation> {
  const organisation = await ctx.em.findOne(OrganisationSchema, { id: ctx.principal.organisationId });
  if (!organisation) throw new NotFoundError('Organisation not found.');
  return organisation;
}

export async function getApiKeyRecord(ctx: ServiceContext, id: string): Promise<ApiKey> {
  const record = isUuid(id) ? await ctx.em.findOne(ApiKeySchema, { id: id.toLowerCase() }) : null;
  if (!record || !ctx.scope.owns(record)) {
    throw new NotFoundError(`No API key found with id '${id}'.`, { param: 'id' });
  }
  return record;
}


export interface CreatedApiKey {
  record: ApiKey;
  /** The secret, returned this once. */
  key: string;
}

export async function insertApiKey(
  em: EntityManager,
  runtime: Runtime,
  input: { organisationId: string; workspaceId: string | null; type: ApiKeyType; name: string; key?: string },
): Promise<CreatedApiKey> {
  const key = input.key ?? generateApiKey();
  const record = em.create(ApiKeySchema, {
    id: uuid(),
    organisationId: input.organisationId,
    workspaceId: input.workspaceId,
    type: input.type,
    name: input.name,
    keyHash: hashApiKey(key),
    keyPrefix: displayPrefix(key),
    status: 'active',
    createdAt: runtime.clock.now(),
    revokedAt: null,
    lastUsedAt: null,
  });
  await em.flush();
  runtime.apiKeys.forgetHash(record.keyHash);
  return { record, key };
}

export async function createApiKey(ctx: ServiceContext, raw: CreateApiKeyInput): Promise<CreatedApiKey> {
  const input = parseContract(createApiKeyContract, raw);
  const name = validateName(input.name);
  if (input.type === 'organisation') {
    ctx.scope.requireOrganisationKey();
    if (input.workspace_id != null) {
      throw new BadRequestError("'workspace_id' is only for workspace keys.", { param: 'workspace_id' });
    }
    return insertApiKey(ctx.em, ctx.runtime, { organisationId: ctx.principal.organisationId, workspaceId: null, type: 'organisation', name });
  }
  const workspace = await resolveWorkspace(ctx.em, ctx.principal, input.workspace_id ?? null);
  return insertApiKey(ctx.em, ctx.runtime, {
    organisationId: ctx.principal.organisationId,
    workspaceId: workspace.id,
    type: 'workspace',
    name,
  });
}

export async function listApiKeys(ctx: ServiceContext): Promise<ApiKey[]> {
  return ctx.em.find(ApiKeySchema, ctx.scope.rows(), { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function revokeApiKey(ctx: ServiceContext, id: string): Promise<ApiKey> {
  const record = await getApiKeyRecord(ctx, id);
  if (record.type === 'organisation' && ctx.principal.type !== 'organisation') {
    throw new PermissionError('A workspace API key cannot revoke organisation API keys.', { code: 'permission_denied' });
  }
  if (record.status !== 'revoked') {
    record.status = 'revoked';
    record.revokedAt = ctx.runtime.clock.now();
    await ctx.em.flush();
  }
  ctx.runtime.apiKeys.forgetKeyId(record.id);
  ctx.runtime.apiKeys.forgetHash(record.keyHash);
  return record;
}
