import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/core';
import { resolveWorkspace } from '../../auth/tenancy.js';
import type { CreateProviderInput, UpdateProviderInput } from './providers.contract.js';
import type { ServiceContext } from '../../context.js';
import { ConflictError, NotFoundError, PermissionError, missingParameter } from '../../errors.js';
import { configCache } from '../../lib/config-cache.js';
import { uuid } from '../../lib/ids.js';
import { retryOnSlugConflict } from '../../lib/slug-retry.js';
import type { Runtime } from '../../runtime.js';
import { validateName } from '../tenancy/tenancy.service.js';
import type { Workspace } from '../tenancy/workspace.entity.js';
import { IntegrationSchema, type Integration } from './integration.entity.js';
import { findIntegration, SLUG_MAX, validateSlug } from './lookup.js';
import { pageOf, type PageInput } from '../../lib/paging.js';
import { ProviderSchema, type Provider } from './provider.entity.js';
import { WorkspaceAccessSchema } from './workspace-access.entity.js';


async function uniqueProviderSlug(em: EntityManager, workspaceId: string, base: string): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base.slice(0, SLUG_MAX - String(n).length - 1)}-${n}`;
    if (!(await em.count(ProviderSchema, { workspaceId, activeSlug: candidate }))) return candidate;
  }
}

/**
 * The provider a workspace gets when it gains access to an integration: unless it already has an
 * active one for that integration, a new one whose slug (the virtual key) is the integration's
 * slug, or that slug with a number when the workspace already uses it.
 */
export async function ensureProvider(
  em: EntityManager,
  runtime: Runtime,
  integration: Pick<Integration, 'id' | 'slug' | 'name'>,
  workspace: Pick<Workspace, 'id' | 'organisationId'>,
): Promise<void> {
  if (await em.count(ProviderSchema, { integrationId: integration.id, workspaceId: workspace.id, status: 'active' })) return;
  const slug = await uniqueProviderSlug(em, workspace.id, integration.slug);
  const now = runtime.clock.now();
  em.create(ProviderSchema, {
    id: uuid(),
    organisationId: workspace.organisationId,
    workspaceId: workspace.id,
    integrationId: integration.id,
    slug,
    activeSlug: slug,
    name: integration.name,
    note: null,
    status: 'active',
    inputGuardrails: [],
    outputGuardrails: [],
    createdAt: now,
    updatedAt: now,
  });
  // Flushed now so that the next uniqueness check in this transaction sees it.
  await em.flush();
}

function conflict(slug: string): ConflictError {
  return new ConflictError(`A provider with slug '${slug}' already exists in this workspace.`, { param: 'slug' });
}

function notFound(slug: string): NotFoundError {
  return new NotFoundError(`No provider found with slug '${slug}'.`, { code: 'provider_not_found' });
}

async function findProvider(ctx: ServiceContext, slug: string, workspaceId?: string | null): Promise<Provider> {
  const workspace = await resolveWorkspace(ctx.em, ctx.principal, workspaceId);
  const provider = await ctx.em.findOne(ProviderSchema, { workspaceId: workspace.id, activeSlug: slug });
  if (!provider) throw notFound(slug);
  return provider;
}

/**
 * Another virtual key for an integration the workspace has access to (each workspace gets one
 * automatically; more are useful for different guardrails). Workspace keys may create providers
 * in their own workspace.
 */
export async function createProvider(ctx: ServiceContext, input: CreateProviderInput): Promise<Provider> {
  const workspace = await resolveWorkspace(ctx.em, ctx.principal, input.workspace_id);
  if (input.integration_id === '') throw missingParameter('integration_id');
  const integration = await findIntegration(ctx.em, ctx.principal.organisationId, input.integration_id, 'integration_id');
  const name = input.name != null ? validateName(input.name) : integration.name;
  const note = input.note ?? null;
  const inputGuardrails = input.input_guardrails ?? [];
  const outputGuardrails = input.output_guardrails ?? [];
  const access = await ctx.em.findOne(WorkspaceAccessSchema, { integrationId: integration.id, workspaceId: workspace.id });
  if (!access?.enabled) {
    throw new PermissionError(
      `Integration '${integration.slug}' is not enabled for workspace '${workspace.slug}': grant access with PUT /v1/integrations/${integration.slug}/workspaces first.`,
      { code: 'integration_disabled' },
    );
  }
  const requested = input.slug != null ? validateSlug(input.slug) : null;
  try {
    // The slug is picked inside the insert's transaction (see retryOnSlugConflict).
    return await retryOnSlugConflict(() =>
      ctx.em.transactional(async (tx) => {
        let slug: string;
        if (requested !== null) {
          slug = requested;
          if (await tx.count(ProviderSchema, { workspaceId: workspace.id, activeSlug: slug })) throw conflict(slug);
        } else {
          slug = await uniqueProviderSlug(tx, workspace.id, integration.slug);
        }
        const now = ctx.runtime.clock.now();
        return tx.create(ProviderSchema, {
          id: uuid(),
          organisationId: ctx.principal.organisationId,
          workspaceId: workspace.id,
          integrationId: integration.id,
          slug,
          activeSlug: slug,
          name,
          note,
          status: 'active',
          inputGuardrails,
          outputGuardrails,
          createdAt: now,
          updatedAt: now,
        });
      }),
    );
  } catch (error) {
    // A requested slug another process took between the check and the insert.
    if (error instanceof UniqueConstraintViolationException && requested !== null) throw conflict(requested);
    throw error;
  }
}

export interface ListProvidersInput extends PageInput {
  workspaceId?: string | null;
}

/** Active providers, newest first: of one workspace when named, else of every workspace the caller can see. */
export async function listProviders(ctx: ServiceContext, input: ListProvidersInput): Promise<{ total: number; data: Provider[] }> {
  const { offset, limit } = pageOf(input);
  const where: Record<string, unknown> = { ...ctx.scope.rows(), status: 'active' };
  if (input.workspaceId) where.workspaceId = (await ctx.scope.workspace(ctx.em, input.workspaceId)).id;
  const total = await ctx.em.count(ProviderSchema, where);
  const data = limit === 0 ? [] : await ctx.em.find(ProviderSchema, where, { orderBy: { createdAt: 'desc', id: 'asc' }, offset, limit });
  return { total, data };
}

export async function getProvider(ctx: ServiceContext, slug: string, workspaceId?: string | null): Promise<Provider> {
  return findProvider(ctx, slug, workspaceId);
}

/** Changes what is sent; `null` guardrail lists empty them. */
export async function updateProvider(ctx: ServiceContext, slug: string, input: UpdateProviderInput, workspaceId?: string | null): Promise<Provider> {
  const provider = await findProvider(ctx, slug, workspaceId);
  const name = input.name != null ? validateName(input.name) : provider.name;
  const note = input.note !== undefined ? input.note : provider.note;
  const inputGuardrails = input.input_guardrails !== undefined ? (input.input_guardrails ?? []) : provider.inputGuardrails;
  const outputGuardrails = input.output_guardrails !== undefined ? (input.output_guardrails ?? []) : provider.outputGuardrails;
  Object.assign(provider, { name, note: note ?? null, inputGuardrails, outputGuardrails, updatedAt: ctx.runtime.clock.now() });
  await ctx.em.flush();
  configCache(ctx.runtime).invalidate('providers');
  return provider;
}

/** Archives the provider: its virtual key stops resolving and its slug is free again. */
export async function deleteProvider(ctx: ServiceContext, slug: string, workspaceId?: string | null): Promise<Provider> {
  const provider = await findProvider(ctx, slug, workspaceId);
  Object.assign(provider, { status: 'archived' as const, activeSlug: null, updatedAt: ctx.runtime.clock.now() });
  await ctx.em.flush();
  configCache(ctx.runtime).invalidate('providers');
  return provider;
}

/** Integrations by id, in the order asked (a batch loader); archived ones too, so a provider's integration always resolves. */
export async function integrationsByIds(em: EntityManager, ids: readonly string[]): Promise<Array<Integration | Error>> {
  const rows = await em.find(IntegrationSchema, { id: { $in: [...new Set(ids)] } });
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id) ?? new Error(`Integration ${id} not found.`));
}
