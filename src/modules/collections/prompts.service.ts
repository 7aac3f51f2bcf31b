import { raw, type EntityManager, type FilterQuery } from '@mikro-orm/core';
import type { Principal } from '../../auth/principal.js';
import { resolveWorkspace } from '../../auth/tenancy.js';
import type { ServiceContext } from '../../context.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { isUuid, uuid } from '../../lib/ids.js';
import { findPage, type Page, type PageInput } from '../../lib/paging.js';
import { retryOnSlugConflict } from '../../lib/slug-retry.js';
import { validateName } from '../tenancy/tenancy.service.js';
import { changingDetails } from './collection-details.js';
import { findCollection, findVisible, freeSlug, nameFilter, searchTerm } from './collections.service.js';
import { settingsOf, type PromptSettings } from './prompt-settings.js';
import { PromptVersionSchema, type PromptVersion } from './prompt-version.entity.js';
import { PromptSchema, type Prompt } from './prompt.entity.js';
import type { CreatePromptInput, MakeDefaultPromptInput, UpdatePromptInput, UpdatePromptVersionInput } from './prompts.contract.js';

const PROMPT_PARAM = 'promptId';
const VERSION_PARAM = 'versionId';

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

/** An archived prompt can be read, not changed or used. */
export function requireActive(prompt: Prompt, doing = 'changed'): void {
  if (prompt.status !== 'active') {
    throw new BadRequestError(`Archived prompts cannot be ${doing}.`, { param: PROMPT_PARAM, code: 'prompt_archived' });
  }
}

/** The settings a version stores, from a contract's wire fields. */
function settingsFrom(input: Pick<UpdatePromptInput, 'parameters' | 'virtual_key' | 'version_description' | 'functions' | 'tools' | 'tool_choice' | 'template_metadata'>): Partial<PromptSettings> {
  const wire: Record<keyof PromptSettings, unknown> = {
    parameters: input.parameters,
    virtualKey: input.virtual_key,
    versionDescription: input.version_description,
    functions: input.functions,
    tools: input.tools,
    toolChoice: input.tool_choice,
    templateMetadata: input.template_metadata,
  };
  return Object.fromEntries(Object.entries(wire).filter(([, value]) => value != null)) as Partial<PromptSettings>;
}

/** An active collection the caller sees, to hold a prompt. */
async function holdingCollection(em: EntityManager, principal: Principal, idOrSlug: string) {
  const collection = await findCollection(em, principal, idOrSlug, { param: 'collection_id' });
  requireHolding(collection.status === 'active');
  return collection;
}

/** `active`: whether the collection is active (read after the lock when there is one, see changingDetails). */
function requireHolding(active: boolean): void {
  if (!active) {
    throw new BadRequestError('Prompts cannot be added to an archived collection.', { param: 'collection_id', code: 'collection_archived' });
  }
}

function writeVersion(em: EntityManager, prompt: Prompt, createdAt: Date): PromptVersion {
  return em.create(PromptVersionSchema, {
    id: uuid(),
    promptId: prompt.id,
    version: prompt.version,
    name: prompt.name,
    template: prompt.template,
    model: prompt.model,
    ...settingsOf(prompt),
    labelId: null,
    createdAt,
  });
}

/** A prompt at version 1, with its first version kept. */
export async function createPrompt(ctx: ServiceContext, input: CreatePromptInput): Promise<Prompt> {
  const name = validateName(input.name);
  return retryOnSlugConflict(() =>
    ctx.em.transactional(async (em) => {
      const collection = await holdingCollection(em, ctx.principal, input.collection_id);
      const now = ctx.runtime.clock.now();
      const slug = await freeSlug(em, 'prompt', collection.workspaceId, name);
      return changingDetails(em, { details: [collection.id] }, async (active) => {
        requireHolding(active.has(collection.id));
        const prompt = em.create(PromptSchema, {
          id: uuid(),
          organisationId: collection.organisationId,
          workspaceId: collection.workspaceId,
          collectionId: collection.id,
          name,
          slug,
          template: input.string,
          model: input.model.trim(),
          ...settingsOf(settingsFrom(input)),
          version: 1,
          defaultVersion: null,
          status: 'active',
          createdAt: now,
          lastUpdatedAt: now,
        });
        writeVersion(em, prompt, now);
        await em.flush();
        return prompt;
      });
    }),
  );
}

/**
 * Every update makes a new version and keeps the old ones; what the update omits keeps its value
 * in the latest version. The new version is the default only if no version was made the default. The version number is raised by the statement that writes the change (atomic, never
 * read-modify-write), and the new version row is written from what that statement stored.
 */
export async function updatePrompt(ctx: ServiceContext, idOrSlug: string, input: UpdatePromptInput): Promise<Prompt> {
  const changes: Partial<Pick<Prompt, 'name' | 'template' | 'model' | 'collectionId'>> & Partial<PromptSettings> = settingsFrom(input);
  if (input.name != null) changes.name = validateName(input.name);
  if (input.string != null) changes.template = input.string;
  if (input.model != null) changes.model = input.model.trim();
  if (!Object.keys(changes).length && input.collection_id == null) {
    throw new BadRequestError('Send at least one field to change.', { param: null, code: 'missing_required_parameter' });
  }
  return ctx.em.transactional(async (em) => {
    const found = await findPrompt(em, ctx.principal, idOrSlug);
    requireActive(found);
    if (input.collection_id != null) {
      const collection = await holdingCollection(em, ctx.principal, input.collection_id);
      if (collection.workspaceId !== found.workspaceId) {
        throw new BadRequestError('A prompt can move only to a collection of its own workspace.', { param: 'collection_id', code: 'invalid_value' });
      }
      changes.collectionId = collection.id;
    }
    const now = ctx.runtime.clock.now();
    // A change is a prompt's latest: its collection's details (and a new collection's) move.
    return changingDetails(em, { details: [found.collectionId, changes.collectionId] }, async (active) => {
      if (changes.collectionId) requireHolding(active.has(changes.collectionId));
      await em.nativeUpdate(PromptSchema, { id: found.id }, { ...changes, version: raw('version + 1'), lastUpdatedAt: now });
      const prompt = await em.findOneOrFail(PromptSchema, { id: found.id }, { refresh: true });
      writeVersion(em, prompt, now);
      await em.flush();
      return prompt;
    });
  });
}

export async function archivePrompt(ctx: ServiceContext, idOrSlug: string): Promise<Prompt> {
  return ctx.em.transactional(async (em) => {
    const prompt = await findPrompt(em, ctx.principal, idOrSlug);
    if (prompt.status === 'archived') return prompt;
    return changingDetails(em, { details: [prompt.collectionId] }, async () => {
      prompt.status = 'archived';
      prompt.lastUpdatedAt = ctx.runtime.clock.now();
      await em.flush();
      return prompt;
    });
  });
}

export interface ListPromptsInput extends PageInput {
  workspaceId?: string | null;
  collectionId?: string | null;
  search?: string | null;
}

/** Active prompts of one workspace (or one collection of it), newest first; `search` matches names. */
export async function listPrompts(ctx: ServiceContext, input: ListPromptsInput): Promise<Page<Prompt>> {
  const term = searchTerm(input.search);
  const workspace = await resolveWorkspace(ctx.em, ctx.principal, input.workspaceId);
  const where: FilterQuery<Prompt> = { workspaceId: workspace.id, status: 'active' };
  if (input.collectionId) {
    where.collectionId = (await findCollection(ctx.em, ctx.principal, input.collectionId, { workspaceId: workspace.id, param: 'collection_id' })).id;
  }
  return findPage(ctx.em, PromptSchema, { ...where, ...nameFilter(term) }, input);
}

/** One version of a visible prompt, by its id. */
export async function getPromptVersion(ctx: ServiceContext, idOrSlug: string, versionId: string): Promise<{ prompt: Prompt; version: PromptVersion }> {
  const prompt = await findPrompt(ctx.em, ctx.principal, idOrSlug);
  const version = isUuid(versionId) ? await ctx.em.findOne(PromptVersionSchema, { promptId: prompt.id, id: versionId.toLowerCase() }) : null;
  if (!version) throw new NotFoundError('Prompt version not found.', { param: VERSION_PARAM, code: 'prompt_not_found' });
  return { prompt, version };
}

/** Sets (or with null removes) a version's label: the only change a kept version takes. */
export async function labelPromptVersion(ctx: ServiceContext, idOrSlug: string, versionId: string, input: UpdatePromptVersionInput): Promise<PromptVersion> {
  const { prompt, version } = await getPromptVersion(ctx, idOrSlug, versionId);
  requireActive(prompt);
  if (input.label_id !== undefined) {
    version.labelId = input.label_id?.toLowerCase() ?? null;
    await ctx.em.flush();
  }
  return version;
}

/** The version number render, completions and retrieve use when none is named. */
export const defaultVersionOf = (prompt: Pick<Prompt, 'version' | 'defaultVersion'>): number => prompt.defaultVersion ?? prompt.version;

/** The version a prompt is used at: its default. */
export async function defaultVersion(em: EntityManager, prompt: Prompt): Promise<PromptVersion> {
  return em.findOneOrFail(PromptVersionSchema, { promptId: prompt.id, version: defaultVersionOf(prompt) });
}

/**
 * Makes a kept version the default (Portkey's makeDefault); later updates then add versions without
 * changing what the prompt is used at, until another version is made the default.
 */
export async function makeDefaultPromptVersion(ctx: ServiceContext, idOrSlug: string, input: MakeDefaultPromptInput): Promise<Prompt> {
  return ctx.em.transactional(async (em) => {
    const prompt = await findPrompt(em, ctx.principal, idOrSlug);
    requireActive(prompt);
    const version = await em.findOne(PromptVersionSchema, { promptId: prompt.id, version: input.version });
    if (!version) throw new NotFoundError(`Prompt version ${input.version} not found.`, { param: 'version', code: 'prompt_not_found' });
    return changingDetails(em, { details: [prompt.collectionId] }, async () => {
      prompt.defaultVersion = version.version;
      prompt.lastUpdatedAt = ctx.runtime.clock.now();
      await em.flush();
      return prompt;
    });
  });
}
