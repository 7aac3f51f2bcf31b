import { raw, type EntityManager, type FilterQuery } from '@mikro-orm/core';
import type { Principal } from '../../auth/principal.js';
import { resolveWorkspace, Scope } from '../../auth/tenancy.js';
import type { ServiceContext } from '../../context.js';
import type { CreateCollectionInput, MoveCollectionInput, UpdateCollectionInput } from './collections.contract.js';
import { pageOf, type Page } from '../../lib/paging.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../errors.js';
import { isUuid, uuid } from '../../lib/ids.js';
import { retryOnSlugConflict } from '../../lib/slug-retry.js';
import type { Runtime } from '../../runtime.js';
import { validateName } from '../tenancy/tenancy.service.js';
import type { Workspace } from '../tenancy/workspace.entity.js';
import { ancestorIdsOf, byName, collectionsWhere, descendantIdsOf, inChunks, rawAll, type CollectionRead, type CollectionWhere } from './collection-loaders.js';
import { changingDetails } from './collection-details.js';
import { CollectionSchema, type Collection } from './collection.entity.js';
import { PromptSchema } from './prompt.entity.js';
import { firstFreeSlug, slugBase } from './slugs.js';

/** The wire name of the path parameter that names the collection acted on (`/v1/collections/{collectionId}`). */
export const COLLECTION_PARAM = 'collectionId';
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../lib/paging.js';
const SEARCH_MAX = 255;

/** Rows of the caller's organisation, and of its workspace for a workspace key (the Scope's rule). */
export function visibleTo(principal: Principal): { organisationId: string; workspaceId?: string } {
  return new Scope(principal).rows();
}

function collectionNotFound(param: string): NotFoundError {
  return new NotFoundError('Collection not found.', { param, code: 'collection_not_found' });
}

/**
 * Resolves an id or a slug among the rows the caller can see (`find` runs the query). Slugs are
 * unique per workspace, so for an organisation key one slug may name rows in several workspaces:
 * `workspaceId` narrows the search; otherwise the row in the organisation's default workspace wins,
 * and a slug found only in several other workspaces is a 400 asking for the id or `workspace_id`.
 */
export async function findVisible<T extends { workspaceId: string }>(
  em: EntityManager,
  principal: Principal,
  idOrSlug: string | null | undefined,
  options: { workspaceId?: string | null; param: string; notFound: () => Error; what: string },
  find: (where: Record<string, unknown>) => Promise<T[]>,
): Promise<T> {
  if (!idOrSlug) throw options.notFound();
  const where: Record<string, unknown> = { ...visibleTo(principal) };
  if (options.workspaceId) where.workspaceId = (await resolveWorkspace(em, principal, options.workspaceId)).id;
  const rows = await find(isUuid(idOrSlug) ? { ...where, id: idOrSlug.toLowerCase() } : { ...where, slug: idOrSlug });
  if (rows.length === 0) throw options.notFound();
  if (rows.length === 1) return rows[0];
  const home = await resolveWorkspace(em, principal, null);
  const inHome = rows.find((row) => row.workspaceId === home.id);
  if (inHome) return inHome;
  throw new BadRequestError(
    `The slug '${idOrSlug}' names ${options.what}s in several workspaces: use the id, or pass 'workspace_id'.`,
    { param: options.param, code: 'ambiguous_slug' },
  );
}

export function findCollection(
  em: EntityManager,
  principal: Principal,
  idOrSlug: string | null | undefined,
  options: { workspaceId?: string | null; param?: string } = {},
): Promise<Collection> {
  return pickCollection(em, principal, idOrSlug, options, (where) => em.find(CollectionSchema, where as FilterQuery<Collection>));
}

/**
 * A collection to read (not to change): a plain object with its details, outside the identity map
 * (`collectionsWhere`), picked by the same rules as `findCollection`.
 */
export function getCollection(ctx: ServiceContext, idOrSlug: string, workspaceId?: string | null): Promise<CollectionRead> {
  return pickCollection(ctx.em, ctx.principal, idOrSlug, { workspaceId }, (where) => collectionsWhere(ctx.em, where as CollectionWhere));
}

function pickCollection<T extends Collection>(
  em: EntityManager,
  principal: Principal,
  idOrSlug: string | null | undefined,
  options: { workspaceId?: string | null; param?: string },
  find: (where: Record<string, unknown>) => Promise<T[]>,
): Promise<T> {
  const param = options.param ?? COLLECTION_PARAM;
  return findVisible(em, principal, idOrSlug, { workspaceId: options.workspaceId, param, what: 'collection', notFound: () => collectionNotFound(param) }, find);
}

/**
 * A slug for `name`, free among the workspace's collections or prompts: one statement however many
 * suffixes are taken. Plain rows, not entities: partial entities must not enter the identity map.
 */
export async function freeSlug(em: EntityManager, entity: 'collection' | 'prompt', workspaceId: string, name: string): Promise<string> {
  const base = slugBase(name, entity);
  const table = entity === 'collection' ? 'collections' : 'prompts';
  const taken = await rawAll<{ slug: string }>(
    em,
    `select slug from ${table} where workspace_id = ? and (slug = ? or slug like ?)`,
    [workspaceId, base, `${base}-%`],
  );
  return firstFreeSlug(base, taken.map((row) => row.slug));
}

export async function insertCollection(
  em: EntityManager,
  runtime: Runtime,
  input: { workspace: Workspace; name: string; parentId: string | null; isDefault?: boolean },
): Promise<Collection> {
  const now = runtime.clock.now();
  const slug = await freeSlug(em, 'collection', input.workspace.id, input.name);
  return changingDetails(em, { details: [input.parentId] }, async (active) => {
    if (input.parentId && !active.has(input.parentId)) throw parentArchived('parent_collection_id');
    const collection = em.create(CollectionSchema, {
      id: uuid(),
      organisationId: input.workspace.organisationId,
      workspaceId: input.workspace.id,
      parentId: input.parentId,
      name: input.name,
      slug,
      isDefault: input.isDefault ?? false,
      status: 'active',
      createdAt: now,
      lastUpdatedAt: now,
      childCollectionsCount: 0,
      childCollectionsLastUpdatedAt: null,
      promptsCount: 0,
      promptsLastUpdatedAt: null,
    });
    await em.flush();
    return collection;
  });
}

/** Every workspace starts with one default collection, made in the workspace's own transaction. */
export function insertDefaultCollection(em: EntityManager, workspace: Workspace, runtime: Runtime): Promise<Collection> {
  return insertCollection(em, runtime, { workspace, name: 'Default', parentId: null, isDefault: true });
}

function requireCollectionId(value: string, param: string): string {
  if (!isUuid(value)) throw new BadRequestError(`'${param}' must be a collection id (a UUID).`, { param, code: 'invalid_value' });
  return value.toLowerCase();
}

/** A parent for a new or moved collection: visible, active, named by its UUID. */
async function findParent(em: EntityManager, principal: Principal, id: string, param: string): Promise<Collection> {
  const parentId = requireCollectionId(id, param);
  const parent = await em.findOne(CollectionSchema, { ...visibleTo(principal), id: parentId });
  if (!parent) throw new NotFoundError('Parent collection not found.', { param, code: 'collection_not_found' });
  if (parent.status !== 'active') throw parentArchived(param);
  return parent;
}

function parentArchived(param: string): BadRequestError {
  return new BadRequestError('The parent collection is archived.', { param, code: 'collection_archived' });
}

/** `active`: the status read after the lock when given (see changingDetails), else the collection's. */
function requireActive(collection: Collection, active?: ReadonlySet<string>): void {
  if (active ? !active.has(collection.id) : collection.status !== 'active') {
    throw new BadRequestError('Archived collections cannot be changed.', { param: COLLECTION_PARAM, code: 'collection_archived' });
  }
}

export async function createCollection(ctx: ServiceContext, input: CreateCollectionInput): Promise<Collection> {
  const name = validateName(input.name);
  return retryOnSlugConflict(() =>
    ctx.em.transactional(async (em) => {
      const parent = input.parent_collection_id != null
        ? await findParent(em, ctx.principal, input.parent_collection_id, 'parent_collection_id')
        : null;
      let workspace: Workspace;
      if (input.workspace_id || !parent) {
        workspace = await resolveWorkspace(em, ctx.principal, input.workspace_id);
      } else {
        workspace = await resolveWorkspace(em, ctx.principal, parent.workspaceId);
      }
      if (parent && parent.workspaceId !== workspace.id) {
        throw new BadRequestError(`The parent collection is not in workspace '${workspace.slug}'.`, {
          param: 'parent_collection_id',
          code: 'invalid_value',
        });
      }
      return insertCollection(em, ctx.runtime, { workspace, name, parentId: parent?.id ?? null });
    }),
  );
}

export interface ListCollectionsInput {
  workspaceId?: string | null;
  search?: string | null;
  currentPage?: number | null;
  pageSize?: number | null;
}

export type CollectionPage = Page<Collection>;

/** `%`, `_` and `\` in a search term match themselves. */
function likePattern(search: string): string {
  return `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * A list's `search` (part of the name, case-insensitive, at most SEARCH_MAX characters), checked:
 * what `nameFilter` matches; null when there is nothing to search for.
 */
export function searchTerm(search: string | null | undefined): string | null {
  const term = search?.trim() ?? '';
  if (term.length > SEARCH_MAX) {
    throw new BadRequestError(`'search' must be at most ${SEARCH_MAX} characters.`, { param: 'search', code: 'invalid_value' });
  }
  return term || null;
}

/**
 * A checked search term (`searchTerm`) as a filter on `name`. Built right before the query that
 * reads it: MikroORM holds a raw fragment used as a key in a process-wide cache until a query
 * consumes it, so one built before a check that throws would stay there for good.
 */
export function nameFilter(term: string | null): Record<string, never[]> | null {
  return term ? { [raw("lower(name) like ? escape '\\'", [likePattern(term)])]: [] } : null;
}

/** Active collections of one workspace at every level, by name; `search` matches names, case-insensitively. */
export async function listCollections(ctx: ServiceContext, input: ListCollectionsInput): Promise<CollectionPage> {
  const { offset, limit } = pageOf(input);
  const term = searchTerm(input.search);
  const workspace = await resolveWorkspace(ctx.em, ctx.principal, input.workspaceId);
  const where: FilterQuery<Collection> = { workspaceId: workspace.id, status: 'active', ...nameFilter(term) };
  if (limit === 0) return { total: await ctx.em.count(CollectionSchema, where), data: [] };
  const [data, total] = await ctx.em.findAndCount(CollectionSchema, where, { orderBy: byName<Collection>(), limit, offset });
  return { total, data };
}

export async function renameCollection(ctx: ServiceContext, idOrSlug: string, input: UpdateCollectionInput): Promise<Collection> {
  const name = validateName(input.name);
  return ctx.em.transactional(async (em) => {
    const collection = await findCollection(em, ctx.principal, idOrSlug);
    requireActive(collection);
    return changingDetails(em, { details: [collection.parentId], updates: [collection.id] }, async (active) => {
      requireActive(collection, active);
      collection.name = name;
      collection.lastUpdatedAt = ctx.runtime.clock.now();
      await em.flush();
      return collection;
    });
  });
}

/**
 * Moves a collection under another one of its workspace, or to the top level (`null`). A move
 * under itself or one of its descendants would make a cycle: 400. The default collection stays
 * where it is.
 */
export async function moveCollection(ctx: ServiceContext, idOrSlug: string, input: MoveCollectionInput): Promise<Collection> {
  const parentCollectionId = input.parent_collection_id ?? null;
  return ctx.em.transactional(async (em) => {
    const collection = await findCollection(em, ctx.principal, idOrSlug);
    requireActive(collection);
    if (collection.isDefault) {
      throw new BadRequestError('The default collection cannot be moved.', { param: COLLECTION_PARAM, code: 'default_collection' });
    }
    const param = 'parent_collection_id';
    const parent = parentCollectionId != null ? await findParent(em, ctx.principal, parentCollectionId, param) : null;
    if (parent) {
      if (parent.workspaceId !== collection.workspaceId) {
        throw new BadRequestError('The new parent collection is in another workspace.', { param, code: 'invalid_value' });
      }
      const [ancestors] = await ancestorIdsOf(em, [parent.id]);
      if (parent.id === collection.id || ancestors.includes(collection.id)) {
        throw new BadRequestError('A collection cannot be moved under itself or one of its descendants.', {
          param,
          code: 'collection_cycle',
        });
      }
    }
    const parentId = parent?.id ?? null;
    if (collection.parentId === parentId) return collection;
    return changingDetails(em, { details: [collection.parentId, parentId], updates: [collection.id] }, async (active) => {
      requireActive(collection, active);
      if (parentId && !active.has(parentId)) throw parentArchived(param);
      collection.parentId = parentId;
      collection.lastUpdatedAt = ctx.runtime.clock.now();
      await em.flush();
      return collection;
    });
  });
}

/**
 * Archives a collection with everything under it (child collections at every level and their
 * prompts), so no active item is left inside an archived one. The default collection stays.
 */
export async function archiveCollection(ctx: ServiceContext, idOrSlug: string): Promise<Collection> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.em.transactional((em) => archiveOnce(ctx, em, idOrSlug));
    } catch (error) {
      if (!(error instanceof SubtreeChanged)) throw error;
      if (attempt === ARCHIVE_ATTEMPTS) {
        throw new ConflictError('The collection changed while it was being archived; try again.', { param: COLLECTION_PARAM });
      }
    }
  }
}

/** Tries of an archive whose subtree another writer changes meanwhile (each such change is one commit). */
const ARCHIVE_ATTEMPTS = 5;

/** The subtree read before the lock is not the one after it: the archive is rolled back and tried again. */
class SubtreeChanged extends Error {}

async function archiveOnce(ctx: ServiceContext, em: EntityManager, idOrSlug: string): Promise<Collection> {
  const collection = await findCollection(em, ctx.principal, idOrSlug);
  if (collection.isDefault) {
    throw new BadRequestError('The default collection of a workspace cannot be archived.', {
      param: COLLECTION_PARAM,
      code: 'default_collection',
    });
  }
  if (collection.status === 'archived') return collection;
  const now = ctx.runtime.clock.now();
  const descendants = await descendantIdsOf(em, collection.id);
  // Its parent's details lose it; its own and its descendants' lose everything under them.
  return changingDetails(em, { details: [collection.parentId, collection.id, ...descendants] }, async () => {
    // What was read before the lock must still hold: a child created or moved in, or the
    // collection moved, by a writer that committed in between would be missed (left active).
    const [row] = await rawAll<{ parent_id: string | null; status: string }>(em, 'select parent_id, status from collections where id = ?', [collection.id]);
    const after = await descendantIdsOf(em, collection.id);
    if (row.parent_id !== collection.parentId || row.status !== 'active' || !sameIds(after, descendants)) throw new SubtreeChanged();
    for (const ids of inChunks(descendants)) {
      await em.nativeUpdate(CollectionSchema, { id: { $in: ids }, status: 'active' }, { status: 'archived', lastUpdatedAt: now });
    }
    for (const ids of inChunks([collection.id, ...descendants])) {
      await em.nativeUpdate(PromptSchema, { collectionId: { $in: ids }, status: 'active' }, { status: 'archived', lastUpdatedAt: now });
    }
    collection.status = 'archived';
    collection.lastUpdatedAt = now;
    await em.flush();
    return collection;
  });
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return a.length === b.length && b.every((id) => set.has(id));
}
