import type { EntityManager } from '@mikro-orm/core';
import { NotFoundError, PermissionError } from '../errors.js';
import { configCache, type CacheHost } from '../lib/config-cache.js';
import { isUuid } from '../lib/ids.js';
import { WorkspaceSchema, type Workspace } from '../modules/tenancy/workspace.entity.js';
import type { Principal } from './principal.js';

/**
 * The workspace a request acts in. An explicit id or slug must be visible to the caller (another
 * organisation's workspace, or another workspace for a workspace key, does not exist: 404).
 * Without one: the workspace key's own workspace, or the organisation's default workspace.
 */
export async function resolveWorkspace(
  em: EntityManager,
  principal: Principal,
  idOrSlug?: string | null,
  param = 'workspace_id',
): Promise<Workspace> {
  let workspace: Workspace | null;
  if (idOrSlug) {
    const where = isUuid(idOrSlug) ? { id: idOrSlug.toLowerCase() } : { slug: idOrSlug };
    workspace = await em.findOne(WorkspaceSchema, { ...where, organisationId: principal.organisationId });
    if (workspace && principal.workspaceId && workspace.id !== principal.workspaceId) workspace = null;
    if (!workspace) throw new NotFoundError(`Workspace not found: '${idOrSlug}'.`, { param, code: 'workspace_not_found' });
    return workspace;
  }
  workspace = principal.workspaceId
    ? await em.findOne(WorkspaceSchema, { id: principal.workspaceId })
    : await em.findOne(WorkspaceSchema, { organisationId: principal.organisationId, isDefault: true });
  if (!workspace) throw new NotFoundError('Workspace not found.', { param, code: 'workspace_not_found' });
  return workspace;
}

/**
 * The caller's home workspace (`resolveWorkspace` without an id or slug) from the config cache
 * (scope `workspaces`; creating a workspace drops it, and workspaces are never changed or removed).
 * A copy for reading: no unit of work manages it.
 */
export async function cachedHomeWorkspace(
  em: EntityManager,
  runtime: CacheHost,
  principal: Principal,
): Promise<Workspace> {
  const cache = configCache(runtime);
  await cache.syncWith(em);
  return cache.get('workspaces', `${principal.organisationId}\u0000${principal.workspaceId ?? ''}`, async () => ({ ...(await resolveWorkspace(em, principal)) }));
}

/** True when the caller may see rows of this workspace; organisation-wide rows (null) are visible to all its keys. */
export function canSeeWorkspace(principal: Principal, workspaceId: string | null | undefined): boolean {
  if (!workspaceId) return true;
  return principal.workspaceId === null || principal.workspaceId === workspaceId;
}

/** The one answer to a workspace key acting on organisation-level settings (403). */
export function organisationKeyRequired(): PermissionError {
  return new PermissionError('This operation needs an organisation API key.', { code: 'permission_denied' });
}

/** Organisation-level settings are for organisation keys only: a workspace key gets 403. */
export function requireOrganisationKey(principal: Principal): void {
  if (principal.type !== 'organisation') throw organisationKeyRequired();
}

/**
 * What the caller may see and do, asked by every service instead of reading the principal: rows of
 * its organisation, and for a workspace key only its own workspace's (organisation-wide rows, whose
 * workspace is null, where a service has them). On the context as `ctx.scope`.
 */
export class Scope {
  constructor(readonly principal: Principal) {}

  get organisationId(): string {
    return this.principal.organisationId;
  }

  /** A workspace key's own workspace; null for an organisation key. */
  get ownWorkspaceId(): string | null {
    return this.principal.workspaceId;
  }

  get isOrganisationKey(): boolean {
    return this.principal.type === 'organisation';
  }

  /** Whether a row (its organisation and workspace; null: organisation-wide) exists for the caller. */
  sees(row: { organisationId: string; workspaceId?: string | null } | null | undefined): boolean {
    return !!row && row.organisationId === this.organisationId && canSeeWorkspace(this.principal, row.workspaceId);
  }

  /** Whether a row that always belongs to one workspace (null: the organisation's own) is the caller's. */
  owns(row: { organisationId: string; workspaceId?: string | null }): boolean {
    return row.organisationId === this.organisationId && (this.ownWorkspaceId === null || row.workspaceId === this.ownWorkspaceId);
  }

  /** The filter of the workspace rows the caller sees. */
  rows(): { organisationId: string; workspaceId?: string } {
    const own = this.ownWorkspaceId;
    return own ? { organisationId: this.organisationId, workspaceId: own } : { organisationId: this.organisationId };
  }

  /** The same, with organisation-wide rows (workspace null) included. */
  rowsWithShared(): { organisationId: string; $or?: Array<{ workspaceId: string | null }> } {
    const own = this.ownWorkspaceId;
    return own ? { organisationId: this.organisationId, $or: [{ workspaceId: own }, { workspaceId: null }] } : { organisationId: this.organisationId };
  }

  requireOrganisationKey(): void {
    requireOrganisationKey(this.principal);
  }

  /** The workspace the request acts in (see resolveWorkspace). */
  workspace(em: EntityManager, idOrSlug?: string | null, param?: string): Promise<Workspace> {
    return resolveWorkspace(em, this.principal, idOrSlug, param);
  }
}
