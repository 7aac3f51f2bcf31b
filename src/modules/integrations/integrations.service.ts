import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/core';
import { resolveWorkspace } from '../../auth/tenancy.js';
import type { ServiceContext } from '../../context.js';
import { BadRequestError, ConflictError } from '../../errors.js';
import { configCache } from '../../lib/config-cache.js';
import { encryptSecret, maskSecret } from '../../lib/crypto.js';
import { slugify, uuid } from '../../lib/ids.js';
import { retryOnSlugConflict } from '../../lib/slug-retry.js';
import type { Runtime } from '../../runtime.js';
import { validateName } from '../tenancy/tenancy.service.js';
import { WorkspaceSchema, type Workspace } from '../tenancy/workspace.entity.js';
import { bucketStatus, type BucketStatus } from '../usage/alerts.js';
import { usageEngine } from '../usage/usage-engine.js';
import { nextReset, periodKey } from '../usage/usage-periods.js';
import { IntegrationSchema, type AiProviderId, type Integration } from './integration.entity.js';
import { listIntegrationsContract, type ConfigurationsInput, type CreateIntegrationInput, type UpdateIntegrationInput, type UpdateIntegrationWorkspacesInput } from './integrations.contract.js';
import { parseContract } from '../../lib/contract.js';
import { accessPatchOf, applyConfigurations, EMPTY_CONFIGURATIONS, mergeAccess, NO_ACCESS, sameSettings, type AccessPatch, type AccessSettings } from './limits.js';
import { findIntegration, SLUG_MAX } from './lookup.js';
import { pageOf, type PageInput } from '../../lib/paging.js';
import { ProviderSchema } from './provider.entity.js';
import { ensureProvider } from './providers.service.js';
import { WORKSPACE_ACCESS_OWNER, workspaceValueKey } from './usage-limits.js';
import { WorkspaceAccessSchema, type WorkspaceAccess } from './workspace-access.entity.js';

/** The encrypted key and its mask (the contract checked the key); null clears both. Never logs or returns the key itself. */
function sealKey(key: string | null, runtime: Runtime): { encryptedKey: string | null; maskedKey: string | null } {
  if (key === null) return { encryptedKey: null, maskedKey: null };
  return { encryptedKey: encryptSecret(key, runtime.secretKey), maskedKey: maskSecret(key) };
}

export function accessSettingsOf(row: Pick<WorkspaceAccess, 'enabled' | 'usageLimit' | 'rateLimit'>): AccessSettings {
  return { enabled: row.enabled, usageLimit: row.usageLimit ?? null, rateLimit: row.rateLimit ?? null };
}

export interface NewIntegration {
  organisationId: string;
  name: string;
  slug: string;
  description?: string | null;
  aiProviderId: AiProviderId;
  key?: string | null;
  configurations?: ConfigurationsInput | null;
  globalAccess?: AccessSettings | null;
}

/**
 * Writes an integration and gives every workspace of its organisation its access row (following
 * the global access) and, where that access is enabled, its provider. Call inside a transaction.
 */
export async function insertIntegration(em: EntityManager, runtime: Runtime, input: NewIntegration): Promise<Integration> {
  const now = runtime.clock.now();
  const integration = em.create(IntegrationSchema, {
    id: uuid(),
    organisationId: input.organisationId,
    slug: input.slug,
    activeSlug: input.slug,
    name: input.name,
    description: input.description ?? null,
    aiProviderId: input.aiProviderId,
    ...sealKey(input.key ?? null, runtime),
    configurations: applyConfigurations({ ...EMPTY_CONFIGURATIONS }, input.configurations),
    status: 'active',
    globalAccess: input.globalAccess ?? null,
    createdAt: now,
    updatedAt: now,
  });
  // The insert goes first: in SQLite a transaction that writes before it reads never meets a stale snapshot.
  await em.flush();
  const workspaces = await em.find(WorkspaceSchema, { organisationId: input.organisationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  for (const workspace of workspaces) await insertAccess(em, runtime, integration, workspace, integration.globalAccess ?? NO_ACCESS, true);
  await em.flush();
  return integration;
}

async function insertAccess(
  em: EntityManager,
  runtime: Runtime,
  integration: Integration,
  workspace: Pick<Workspace, 'id' | 'organisationId'>,
  settings: AccessSettings,
  inheritsGlobal: boolean,
): Promise<WorkspaceAccess> {
  const now = runtime.clock.now();
  const row = em.create(WorkspaceAccessSchema, {
    id: uuid(),
    organisationId: workspace.organisationId,
    integrationId: integration.id,
    workspaceId: workspace.id,
    ...settings,
    inheritsGlobal,
    createdAt: now,
    updatedAt: now,
  });
  if (settings.enabled) await ensureProvider(em, runtime, integration, workspace);
  return row;
}

/** A new workspace gets every active integration's global access (the module's onWorkspaceCreated). */
export async function grantGlobalAccess(em: EntityManager, workspace: Workspace, runtime: Runtime): Promise<void> {
  const integrations = await em.find(IntegrationSchema, { organisationId: workspace.organisationId, status: 'active' }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  for (const integration of integrations) await insertAccess(em, runtime, integration, workspace, integration.globalAccess ?? NO_ACCESS, true);
}

async function uniqueIntegrationSlug(em: EntityManager, organisationId: string, base: string): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base.slice(0, SLUG_MAX - String(n).length - 1)}-${n}`;
    if (!(await em.count(IntegrationSchema, { organisationId, activeSlug: candidate }))) return candidate;
  }
}

function conflict(slug: string): ConflictError {
  return new ConflictError(`An integration with slug '${slug}' already exists.`, { param: 'slug' });
}

export async function createIntegration(ctx: ServiceContext, input: CreateIntegrationInput): Promise<Integration> {
  ctx.scope.requireOrganisationKey();
  const organisationId = ctx.principal.organisationId;
  const name = validateName(input.name);
  const requested = input.slug ?? null;
  try {
    // The slug is picked inside the insert's transaction (see retryOnSlugConflict).
    return await retryOnSlugConflict(() =>
      ctx.em.transactional(async (tx) => {
        let slug: string;
        if (requested !== null) {
          slug = requested;
          if (await tx.count(IntegrationSchema, { organisationId, activeSlug: slug })) throw conflict(slug);
        } else {
          slug = await uniqueIntegrationSlug(tx, organisationId, slugify(name, 'integration'));
        }
        return insertIntegration(tx, ctx.runtime, {
          organisationId,
          name,
          slug,
          description: input.description ?? null,
          aiProviderId: input.ai_provider_id,
          key: input.key ?? null,
          configurations: input.configurations,
        });
      }),
    );
  } catch (error) {
    // A requested slug another process took between the check and the insert.
    if (error instanceof UniqueConstraintViolationException && requested !== null) throw conflict(requested);
    throw error;
  }
}

export interface ListIntegrationsInput extends PageInput {
  workspaceId?: string | null;
  type?: string | null;
}

export async function listIntegrations(ctx: ServiceContext, input: ListIntegrationsInput): Promise<{ total: number; data: Integration[] }> {
  const { offset, limit } = pageOf(input);
  const filter = parseContract(listIntegrationsContract, { workspace_id: input.workspaceId, type: input.type });
  const type = filter.type ?? 'all';
  const where: Record<string, unknown> = { organisationId: ctx.principal.organisationId, status: 'active' };
  if (filter.workspace_id) {
    const workspace = await resolveWorkspace(ctx.em, ctx.principal, filter.workspace_id);
    const rows = await ctx.em.find(WorkspaceAccessSchema, { workspaceId: workspace.id, enabled: true }, { fields: ['integrationId'] });
    where.id = { $in: rows.map((row) => row.integrationId) };
  }
  // Every integration here is organisation-level: a filter on workspace-level ones finds none.
  if (type === 'workspace') return { total: 0, data: [] };
  const total = await ctx.em.count(IntegrationSchema, where);
  const data = limit === 0 ? [] : await ctx.em.find(IntegrationSchema, where, { orderBy: { createdAt: 'desc', id: 'asc' }, offset, limit });
  return { total, data };
}

export async function getIntegration(ctx: ServiceContext, slugOrId: string): Promise<Integration> {
  return findIntegration(ctx.em, ctx.principal.organisationId, slugOrId);
}

/** Changes what is sent: omitted fields stay, `key: null` removes the key, `configurations` merge key by key. */
export async function updateIntegration(ctx: ServiceContext, slugOrId: string, input: UpdateIntegrationInput): Promise<Integration> {
  ctx.scope.requireOrganisationKey();
  const integration = await findIntegration(ctx.em, ctx.principal.organisationId, slugOrId);
  const name = input.name != null ? validateName(input.name) : integration.name;
  const description = input.description !== undefined ? input.description : integration.description;
  const configurations = applyConfigurations(integration.configurations ?? { ...EMPTY_CONFIGURATIONS }, input.configurations);
  const sealed = input.key !== undefined ? sealKey(input.key, ctx.runtime) : null;
  integration.name = name;
  integration.description = description ?? null;
  integration.configurations = configurations;
  if (sealed) Object.assign(integration, sealed);
  integration.updatedAt = ctx.runtime.clock.now();
  await ctx.em.flush();
  configCache(ctx.runtime).invalidate('providers');
  return integration;
}

/**
 * Archives the integration and its providers (their virtual keys stop resolving); their slugs
 * become free for new ones. Usage history stays.
 */
export async function deleteIntegration(ctx: ServiceContext, slugOrId: string): Promise<Integration> {
  ctx.scope.requireOrganisationKey();
  const integration = await findIntegration(ctx.em, ctx.principal.organisationId, slugOrId);
  const now = ctx.runtime.clock.now();
  await ctx.em.transactional(async (tx) => {
    await tx.nativeUpdate(IntegrationSchema, { id: integration.id }, { status: 'archived', activeSlug: null, updatedAt: now });
    await tx.nativeUpdate(ProviderSchema, { integrationId: integration.id, status: 'active' }, { status: 'archived', activeSlug: null, updatedAt: now });
  });
  configCache(ctx.runtime).invalidate('providers');
  // The same values the transaction wrote, so this request's unit of work agrees with the database.
  return Object.assign(integration, { status: 'archived' as const, activeSlug: null, updatedAt: now });
}

/** Workspace access rows the caller can see, in workspace creation order. */
export async function listIntegrationWorkspaces(ctx: ServiceContext, slugOrId: string): Promise<{ total: number; workspaces: WorkspaceAccess[] }> {
  const integration = await findIntegration(ctx.em, ctx.principal.organisationId, slugOrId);
  return (await accessRowsByIntegrationIds(ctx, [integration.id]))[0];
}

/** For a batch of integrations (a GraphQL loader): each one's access rows the caller can see, in workspace order. */
export async function accessRowsByIntegrationIds(ctx: ServiceContext, ids: readonly string[]): Promise<Array<{ total: number; workspaces: WorkspaceAccess[] }>> {
  const own = ctx.scope.ownWorkspaceId;
  const workspaceWhere = own ? { id: own } : { organisationId: ctx.scope.organisationId };
  const workspaces = await ctx.em.find(WorkspaceSchema, workspaceWhere, { orderBy: { createdAt: 'asc', id: 'asc' }, fields: ['id'] });
  const order = new Map(workspaces.map((w, i) => [w.id, i]));
  const rows = await ctx.em.find(WorkspaceAccessSchema, { integrationId: { $in: [...new Set(ids)] }, workspaceId: { $in: [...order.keys()] } });
  return ids.map((id) => {
    const mine = rows.filter((row) => row.integrationId === id).sort((a, b) => order.get(a.workspaceId)! - order.get(b.workspaceId)!);
    return { total: mine.length, workspaces: mine };
  });
}

export interface AccessUsage {
  /** Usage in the current period, in the limit's unit (dollars or tokens). */
  currentUsage: number;
  status: BucketStatus;
  /** `2026-11`, `2026-W48` or `all`. */
  periodKey: string;
  /** Start of the next period, when usage starts again from zero; null when the limit never resets. */
  nextResetAt: Date | null;
}

/** Current-period usage of each access's usage limit (null without one), in one query for all. */
export async function accessUsage(runtime: Runtime, rows: readonly WorkspaceAccess[]): Promise<Array<AccessUsage | null>> {
  const limited = rows.filter((row) => row.usageLimit);
  const buckets = await usageEngine(runtime).currentBucketsOf(
    WORKSPACE_ACCESS_OWNER,
    limited.map((row) => ({ ownerId: row.id, type: row.usageLimit!.type, periodicReset: row.usageLimit!.periodicReset, creditLimit: row.usageLimit!.creditLimit })),
  );
  const byId = new Map(limited.map((row, i) => [row.id, buckets[i]]));
  const now = runtime.clock.now();
  return rows.map((row) => {
    const limit = row.usageLimit;
    if (!limit) return null;
    const bucket = byId.get(row.id)?.find((b) => b.valueKey === workspaceValueKey(row.workspaceId));
    const nextResetAt = nextReset(limit.periodicReset, now);
    if (bucket) return { currentUsage: bucket.currentUsage, status: bucket.status, periodKey: bucket.periodKey, nextResetAt };
    return { currentUsage: 0, status: bucketStatus(0, limit.creditLimit), periodKey: periodKey(limit.periodicReset, now), nextResetAt };
  });
}

export interface UpdatedWorkspaceAccess {
  /** Access rows whose usage the caller asked to reset (`reset_usage: true`). */
  resetAccessIds: string[];
}

/**
 * PUT /v1/integrations/{slug}/workspaces. Everything is validated before anything is
 * written, and all writes are one transaction: any invalid item leaves everything unchanged.
 *
 * Rows listed in `workspaces` are set one by one and stop following the global access. The global
 * access (when sent) becomes the default of rows that still follow it and of workspaces created
 * later; `override_existing_workspace_access` makes every row not listed follow it again. Limits
 * left out of an item keep their current value; `null` or `[]` removes them.
 */
export async function updateIntegrationWorkspaces(
  ctx: ServiceContext,
  slugOrId: string,
  input: UpdateIntegrationWorkspacesInput,
): Promise<UpdatedWorkspaceAccess> {
  ctx.scope.requireOrganisationKey();
  const integration = await findIntegration(ctx.em, ctx.principal.organisationId, slugOrId);

  const global = input.global_workspace_access;
  const globalPatch: AccessPatch | null | undefined = global === undefined || global === null ? global : accessPatchOf(global);

  const items: Array<{ workspace: Workspace; patch: AccessPatch; resetUsage: boolean }> = [];
  const seen = new Map<string, number>();
  for (const [i, item] of (input.workspaces ?? []).entries()) {
    const param = `workspaces[${i}]`;
    const workspace = await resolveWorkspace(ctx.em, ctx.principal, item.id, `${param}.id`);
    const earlier = seen.get(workspace.id);
    if (earlier !== undefined) {
      throw new BadRequestError(`Workspace '${item.id}' is listed twice (also as workspaces[${earlier}]).`, { param: `${param}.id`, code: 'invalid_value' });
    }
    seen.set(workspace.id, i);
    items.push({ workspace, patch: accessPatchOf(item), resetUsage: item.reset_usage === true });
  }
  // Both spellings: the document's and the portkey-ai SDK's.
  const override = (input.override_existing_workspace_access ?? input.override_existing_workspaces_access) === true;

  const resetAccessIds: string[] = [];
  await ctx.em.transactional(async (tx) => {
    const now = ctx.runtime.clock.now();
    // Write first (see insertIntegration); this also orders concurrent updates of one integration.
    await tx.nativeUpdate(IntegrationSchema, { id: integration.id }, { updatedAt: now });
    const fresh = await tx.findOneOrFail(IntegrationSchema, { id: integration.id });
    if (globalPatch !== undefined) {
      fresh.globalAccess = globalPatch === null ? null : mergeAccess(fresh.globalAccess ?? NO_ACCESS, globalPatch);
    }
    const globalAccess = fresh.globalAccess ?? NO_ACCESS;
    const workspaces = await tx.find(WorkspaceSchema, { organisationId: integration.organisationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    const rows = new Map((await tx.find(WorkspaceAccessSchema, { integrationId: integration.id })).map((row) => [row.workspaceId, row]));
    const listed = new Map(items.map((item) => [item.workspace.id, item]));
    for (const workspace of workspaces) {
      const item = listed.get(workspace.id);
      const row = rows.get(workspace.id);
      if (!row) {
        const settings = item ? mergeAccess(NO_ACCESS, item.patch) : globalAccess;
        const created = await insertAccess(tx, ctx.runtime, fresh, workspace, settings, !item);
        if (item?.resetUsage) resetAccessIds.push(created.id);
        continue;
      }
      let next: AccessSettings;
      let inherits: boolean;
      if (item) {
        next = mergeAccess(accessSettingsOf(row), item.patch);
        inherits = false;
        if (item.resetUsage) resetAccessIds.push(row.id);
      } else if (override || row.inheritsGlobal) {
        next = globalAccess;
        inherits = true;
      } else {
        continue;
      }
      if (sameSettings(accessSettingsOf(row), next) && row.inheritsGlobal === inherits) continue;
      const wasEnabled = row.enabled;
      Object.assign(row, next, { inheritsGlobal: inherits, updatedAt: now });
      // Gaining access creates the workspace's provider (virtual key) when it has none.
      if (next.enabled && !wasEnabled) await ensureProvider(tx, ctx.runtime, fresh, workspace);
    }
    await tx.flush();
    // In the same transaction: all or nothing, the usage reset included.
    const engine = usageEngine(ctx.runtime);
    for (const accessId of resetAccessIds) await engine.resetUsage(WORKSPACE_ACCESS_OWNER, accessId, undefined, {}, tx);
  });
  configCache(ctx.runtime).invalidate('providers');
  return { resetAccessIds };
}
