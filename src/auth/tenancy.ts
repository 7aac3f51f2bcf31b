import type { EntityManager } from '@mikro-orm/core';
import { NotFoundError, PermissionError } from '../errors.js';
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

/** True when the caller may see rows of this workspace; organisation-wide rows (null) are visible to all its keys. */
export function canSeeWorkspace(principal: Principal, workspaceId: string | null | undefined): boolean {
  if (!workspaceId) return true;
  return principal.workspaceId === null || principal.workspaceId === workspaceId;
}

/** Organisation-level settings are for organisation keys only: a workspace key gets 403. */
export function requireOrganisationKey(principal: Principal, action: string): void {
  if (principal.type !== 'organisation') {
    throw new PermissionError(`A workspace API key cannot ${action}: use an organisation API key.`, {
      code: 'permission_denied',
    });
  }
}
