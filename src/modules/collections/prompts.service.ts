import { raw, type EntityManager, type FilterQuery } from '@mikro-orm/core';
import type { Principal } from '../../auth/principal.js';
import type { ServiceContext } from '../../context.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { uuid } from '../../lib/ids.js';
import { validateName } from '../tenancy/tenancy.service.js';
import { retryOnSlugConflict } from '../../lib/slug-retry.js';
import { findCollection, findVisible, freeSlug } from './collections.service.js';
import { PromptVersionSchema } from './prompt-version.entity.js';
import { PromptSchema, type Prompt } from './prompt.entity.js';

const PROMPT_PARAM = 'promptId';
const TEMPLATE_MAX = 100_000;
const MODEL_MAX = 255;

function validateTemplate(template: unknown): string {
  if (typeof template !== 'string' || !template.trim()) {
    throw new BadRequestError("'template' must be a non-empty string.", { param: 'template', code: 'invalid_value' });
  }
  if (template.length > TEMPLATE_MAX) {
    throw new BadRequestError(`'template' must be at most ${TEMPLATE_MAX} characters.`, { param: 'template', code: 'invalid_value' });
  }
  return template;
}

function validateModel(model: unknown): string {
  if (typeof model !== 'string' || !model.trim()) {
    throw new BadRequestError("'model' must be a non-empty string.", { param: 'model', code: 'invalid_value' });
  }
  if (model.length > MODEL_MAX) {
    throw new BadRequestError(`'model' must be at most ${MODEL_MAX} characters.`, { param: 'model', code: 'invalid_value' });
  }
  return model.trim();
}

export function findPrompt(em: EntityManager, principal: Principal, idOrSlug: string | null | undefined, workspaceId?: string | null): Promise<Prompt> {
  return findVisible(
    em,
    principal,
    idOrSlug,
    {
      workspaceId,
      param: PROMPT_PARAM,
      what: 'prompt',
      notFound: () => new NotFoundError('Prompt not found.', { param: PROMPT_PARAM, code: 'prompt_not_found' }),
    },
    (where) => em.find(PromptSchema, where as FilterQuery<Prompt>),
  );
}

export function getPrompt(ctx: ServiceContext, idOrSlug: string, workspaceId?: string | null): Promise<Prompt> {
  return findPrompt(ctx.em, ctx.principal, idOrSlug, workspaceId);
}

function requireActive(prompt: Prompt): void {
  if (prompt.status !== 'active') {
    throw new BadRequestError('Archived prompts cannot be changed.', { param: PROMPT_PARAM, code: 'prompt_archived' });
  }
}

export interface CreatePromptInput {
  /** Collection id or slug. */
  collectionId: string;
  name: string;
  template: string;
  model: string;
}

/** A prompt at version 1, with its first version kept. */
export async function createPrompt(ctx: ServiceContext, input: CreatePromptInput): Promise<Prompt> {
  const name = validateName(input.name);
  const template = validateTemplate(input.template);
  const model = validateModel(input.model);
  return retryOnSlugConflict(() =>
    ctx.em.transactional(async (em) => {
      const collection = await findCollection(em, ctx.principal, input.collectionId, { param: 'collection_id' });
      if (collection.status !== 'active') {
        throw new BadRequestError('Prompts cannot be added to an archived collection.', { param: 'collection_id', code: 'collection_archived' });
      }
      const now = ctx.runtime.clock.now();
      const prompt = em.create(PromptSchema, {
        id: uuid(),
        organisationId: collection.organisationId,
        workspaceId: collection.workspaceId,
        collectionId: collection.id,
        name,
        slug: await freeSlug(em, 'prompt', collection.workspaceId, name),
        template,
        model,
        version: 1,
        status: 'active',
        createdAt: now,
        lastUpdatedAt: now,
      });
      em.create(PromptVersionSchema, { id: uuid(), promptId: prompt.id, version: 1, name, template, model, createdAt: now });
      await em.flush();
      return prompt;
    }),
  );
}

export interface UpdatePromptInput {
  name?: string | null;
  template?: string | null;
  model?: string | null;
}

/**
 * Every update makes a new version and keeps the old ones. The version number is raised by the
 * statement that writes the change (atomic, never read-modify-write), and the new version row is
 * written from what that statement stored.
 */
export async function updatePrompt(ctx: ServiceContext, idOrSlug: string, input: UpdatePromptInput): Promise<Prompt> {
  const changes: { name?: string; template?: string; model?: string } = {};
  if (input.name != null) changes.name = validateName(input.name);
  if (input.template != null) changes.template = validateTemplate(input.template);
  if (input.model != null) changes.model = validateModel(input.model);
  if (!Object.keys(changes).length) {
    throw new BadRequestError("Send at least one of 'name', 'template', 'model'.", { param: null, code: 'missing_required_parameter' });
  }
  return ctx.em.transactional(async (em) => {
    const found = await findPrompt(em, ctx.principal, idOrSlug);
    requireActive(found);
    const now = ctx.runtime.clock.now();
    await em.nativeUpdate(PromptSchema, { id: found.id }, { ...changes, version: raw('version + 1'), lastUpdatedAt: now });
    const prompt = await em.findOneOrFail(PromptSchema, { id: found.id }, { refresh: true });
    em.create(PromptVersionSchema, {
      id: uuid(),
      promptId: prompt.id,
      version: prompt.version,
      name: prompt.name,
      template: prompt.template,
      model: prompt.model,
      createdAt: now,
    });
    await em.flush();
    return prompt;
  });
}

export async function archivePrompt(ctx: ServiceContext, idOrSlug: string): Promise<Prompt> {
  const prompt = await findPrompt(ctx.em, ctx.principal, idOrSlug);
  if (prompt.status === 'archived') return prompt;
  prompt.status = 'archived';
  prompt.lastUpdatedAt = ctx.runtime.clock.now();
  await ctx.em.flush();
  return prompt;
}
