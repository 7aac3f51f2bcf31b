import { raw, type EntityManager, type EntityName, type FilterQuery } from '@mikro-orm/core';
import type { Principal } from '../../auth/principal.js';
import { canSeeWorkspace, requireOrganisationKey, resolveWorkspace } from '../../auth/tenancy.js';
import type { ServiceContext } from '../../context.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { configCache } from '../../lib/config-cache.js';
import { isUuid, prefixedId, uuid } from '../../lib/ids.js';
import { findPage, type Page, type PageInput } from '../../lib/paging.js';
import { validateName } from '../tenancy/tenancy.service.js';
import { evaluationWriter } from './evaluation-writer.js';
import { GuardrailEvaluationSchema, type GuardrailEvaluation, type GuardrailStage } from './guardrail-evaluation.entity.js';
import { GuardrailVersionSchema, type GuardrailVersion } from './guardrail-version.entity.js';
import { GuardrailSchema, type Guardrail, type GuardrailStatus } from './guardrail.entity.js';
import type { CreateGuardrailInput, UpdateGuardrailInput } from './guardrails.contract.js';

export type { Page } from '../../lib/paging.js';

function notFound(idOrSlug: string): NotFoundError {
  return new NotFoundError(`Guardrail not found: '${idOrSlug}'.`, { param: 'guardrail_id', code: 'guardrail_not_found' });
}

/** The guardrail the caller names, if it can see it: another organisation's, or another workspace's for a workspace key, does not exist. */
export async function findVisibleGuardrail(em: EntityManager, principal: Principal, idOrSlug: string): Promise<Guardrail | null> {
  const where = isUuid(idOrSlug) ? { id: idOrSlug.toLowerCase() } : { slug: idOrSlug };
  const guardrail = await em.findOne(GuardrailSchema, { ...where, organisationId: principal.organisationId });
  return guardrail && canSeeWorkspace(principal, guardrail.workspaceId) ? guardrail : null;
}

export async function getGuardrail(ctx: ServiceContext, idOrSlug: string): Promise<Guardrail> {
  const guardrail = await findVisibleGuardrail(ctx.em, ctx.principal, idOrSlug);
  if (!guardrail) throw notFound(idOrSlug);
  return guardrail;
}

/** Organisation-wide guardrails apply in every workspace: only organisation keys change them (403). */
function requireWritable(principal: Principal, guardrail: Guardrail): void {
  if (guardrail.workspaceId === null) requireOrganisationKey(principal);
}

export async function createGuardrail(ctx: ServiceContext, input: CreateGuardrailInput): Promise<Guardrail> {
  const name = validateName(input.name);
  const { checks, actions } = input;
  const workspaceId =
    input.workspace_id || ctx.principal.workspaceId
      ? (await resolveWorkspace(ctx.em, ctx.principal, input.workspace_id ?? null)).id
      : null;
  const now = ctx.runtime.clock.now();
  const keyId = ctx.principal.apiKeyId;
  const created = await ctx.em.transactional(async (tx) => {
    const guardrail = tx.create(GuardrailSchema, {
      id: uuid(),
      slug: prefixedId('guard'),
      organisationId: ctx.principal.organisationId,
      workspaceId,
      name,
      status: 'active',
      ownerId: keyId,
      updatedBy: keyId,
      versionId: uuid(),
      version: 1,
      checks,
      actions,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    });
    tx.create(GuardrailVersionSchema, {
      id: guardrail.versionId,
      guardrailId: guardrail.id,
      version: 1,
      name,
      checks,
      actions,
      createdBy: keyId,
      createdAt: now,
    });
    await tx.flush();
    return guardrail;
  });
  guardrailsChanged(ctx);
  return created;
}

/**
 * An update takes any of name, checks (≥ 1), actions; what is omitted stays as it is, and omitted
 * fields inside a given `actions` take the defaults. Every update writes a new immutable version.
 */
export async function updateGuardrail(ctx: ServiceContext, idOrSlug: string, input: UpdateGuardrailInput): Promise<Guardrail> {
  const current = await getGuardrail(ctx, idOrSlug);
  requireWritable(ctx.principal, current);
  const changes: Partial<Pick<Guardrail, 'name' | 'checks' | 'actions'>> = {};
  if (input.name != null) changes.name = validateName(input.name);
  if (input.checks != null) changes.checks = input.checks;
  if (input.actions != null) changes.actions = input.actions;
  if (!Object.keys(changes).length) {
    throw new BadRequestError("Nothing to update: send at least one of 'name', 'checks', 'actions'.", { code: 'missing_required_parameter' });
  }
  if (current.status === 'archived') throw archived(current);
  const now = ctx.runtime.clock.now();
  const versionId = uuid();
  const changed = await ctx.em.transactional(async (tx) => {
    // Write first (the version counter, atomically), then read: concurrent updates get distinct numbers.
    const updated = await tx.nativeUpdate(
      GuardrailSchema,
      { id: current.id, status: 'active' },
      { ...changes, version: raw('version + 1'), versionId, updatedBy: ctx.principal.apiKeyId, updatedAt: now },
    );
    if (!updated) throw archived(current);
    const guardrail = await tx.findOneOrFail(GuardrailSchema, { id: current.id }, { refresh: true });
    tx.create(GuardrailVersionSchema, {
      id: versionId,
      guardrailId: guardrail.id,
      version: guardrail.version,
      name: guardrail.name,
      checks: guardrail.checks,
      actions: guardrail.actions,
      createdBy: ctx.principal.apiKeyId,
      createdAt: now,
    });
    await tx.flush();
    return guardrail;
  });
  guardrailsChanged(ctx);
  return changed;
}

function archived(guardrail: Guardrail): BadRequestError {
  return new BadRequestError(`Guardrail '${guardrail.slug}' is archived and cannot be updated.`, { param: 'guardrail_id', code: 'guardrail_archived' });
}

/** DELETE archives: versions and evaluations stay readable; repeating it changes nothing. */
export async function archiveGuardrail(ctx: ServiceContext, idOrSlug: string): Promise<Guardrail> {
  const guardrail = await getGuardrail(ctx, idOrSlug);
  requireWritable(ctx.principal, guardrail);
  if (guardrail.status !== 'archived') {
    const now = ctx.runtime.clock.now();
    guardrail.status = 'archived';
    guardrail.archivedAt = now;
    guardrail.updatedAt = now;
    guardrail.updatedBy = ctx.principal.apiKeyId;
    await ctx.em.flush();
    guardrailsChanged(ctx);
  }
  return guardrail;
}

/** Data-plane lookups of guardrails by ref (evaluation.service.ts) are cached: every write drops them. */
function guardrailsChanged(ctx: ServiceContext): void {
  configCache(ctx.runtime).invalidate('guardrails');
}

export interface ListGuardrailsInput extends PageInput {
  /** Id or slug: only that workspace's guardrails. Omitted: every guardrail the caller can see. */
  workspaceId?: string | null;
  status?: GuardrailStatus | null;
}

/** Newest first, ties broken by id; `total` counts every match, not just the page. */
export async function listGuardrails(ctx: ServiceContext, input: ListGuardrailsInput = {}): Promise<Page<Guardrail>> {
  const where: FilterQuery<Guardrail> = input.workspaceId
    ? { organisationId: ctx.scope.organisationId, workspaceId: (await ctx.scope.workspace(ctx.em, input.workspaceId)).id }
    : ctx.scope.rowsWithShared();
  where.status = input.status ?? 'active';
  return findPage<Guardrail>(ctx.em, GuardrailSchema, where, input);
}

/** Every version, oldest first (version 1 is the one created). */
export async function listGuardrailVersions(ctx: ServiceContext, idOrSlug: string): Promise<GuardrailVersion[]> {
  const guardrail = await getGuardrail(ctx, idOrSlug);
  return ctx.em.find(GuardrailVersionSchema, { guardrailId: guardrail.id }, { orderBy: { version: 'asc' } });
}

export interface ListEvaluationsInput extends PageInput {
  /** Id or slug of a guardrail the caller can see. */
  guardrailId?: string | null;
  runId?: string | null;
  requestId?: string | null;
  stage?: GuardrailStage | null;
}

/** Evaluations of requests in workspaces the caller can see, newest first. */
export async function listGuardrailEvaluations(ctx: ServiceContext, input: ListEvaluationsInput = {}): Promise<Page<GuardrailEvaluation>> {
  const where: FilterQuery<GuardrailEvaluation> = ctx.scope.rows();
  if (input.guardrailId) where.guardrailId = (await getGuardrail(ctx, input.guardrailId)).id;
  if (input.runId) where.runId = input.runId;
  if (input.requestId) where.requestId = input.requestId;
  if (input.stage) where.stage = input.stage;
  await evaluationWriter(ctx.runtime).flush();
  return findPage<GuardrailEvaluation>(ctx.em, GuardrailEvaluationSchema, where, input);
}
