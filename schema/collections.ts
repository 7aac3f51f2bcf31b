import {
  ancestorsOf,
  childCollectionsOf,
  collectionsByIds,
  promptsOf,
  workspacesByIds,
  type CollectionDetails,
  type CollectionRead,
} from '../src/modules/collections/collection-loaders.js';
import { createContextCache } from '@pothos/core';
import type { Collection } from '../src/modules/collections/collection.entity.js';
import { KnownCollections } from '../src/modules/collections/known-collections.js';
import * as collections from '../src/modules/collections/collections.service.js';
import { NotFoundError } from '../src/errors.js';
import * as contract from '../src/modules/collections/collections.contract.js';
import { builder } from './builder.js';
import type { RequestContext } from '../src/context.js';
import { contractInputType, parseInput } from './contract-input.js';
import { PromptRef } from './prompts.js';
import { WorkspaceRef } from './tenancy.js';

/*
 * Every relation of a collection is a dataloader field: one query per level and relation, however
 * many collections the level holds (the loaders live in collection-loaders.ts).
 */

export const CollectionStatusEnum = builder.enumType('CollectionStatus', {
  description: 'Archived collections keep their data but leave every tree and count.',
  values: { active: { description: 'In use.' }, archived: { description: 'Archived (with everything under it).' } } as const,
});

// A collection's own fields (CollectionRead): every collection given to GraphQL was read with them,
// so they are answered without a statement or a promise per collection.
const CollectionDetailsRef = builder.objectRef<CollectionDetails>('CollectionDetails').implement({
  description: 'Computed from live data: direct, non-archived children and prompts of a collection.',
  fields: (t) => ({
    childCollectionsCount: t.exposeInt('childCollectionsCount', { description: 'Direct child collections.' }),
    promptsCount: t.exposeInt('promptsCount', { description: 'Prompts directly in the collection.' }),
    childCollectionsLastUpdatedAt: t.expose('childCollectionsLastUpdatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Latest change of a direct child collection; null without children.',
    }),
    promptsLastUpdatedAt: t.expose('promptsLastUpdatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Latest change of a prompt of the collection; null without prompts.',
    }),
  }),
});

/** The collections this request's resolvers returned (KnownCollections): they answer later loads by id. */
const knownCollections = createContextCache((_ctx: RequestContext) => new KnownCollections());

/** `returned` (a collection or a list of them), kept as known to the request. */
function known<T extends CollectionRead | readonly CollectionRead[]>(ctx: RequestContext, returned: T): T {
  knownCollections(ctx).add(Array.isArray(returned) ? returned : [returned as CollectionRead]);
  return returned;
}

/**
 * Collections a service answered as managed entities (a page, a mutation's result), read again as
 * `CollectionRead`s: their details as stored now (a write of this request may have stored new ones
 * after an entity was loaded), and known to the request. One statement for all of them.
 */
async function readAgain(ctx: RequestContext, entities: readonly Collection[]): Promise<CollectionRead[]> {
  if (!entities.length) return [];
  const read = await collectionsByIds(ctx.em, entities.map((entity) => entity.id));
  return known(ctx, read.filter((collection): collection is CollectionRead => collection !== null));
}

/** One entity read again (`readAgain`). */
const readOneAgain = async (ctx: RequestContext, entity: Collection): Promise<CollectionRead> => (await readAgain(ctx, [entity]))[0];

export const CollectionRef = builder.loadableObject('Collection', {
  description: 'A node of a workspace’s collection tree: holds prompts and child collections.',
  load: async (ids: string[], ctx): Promise<Array<CollectionRead | Error>> => {
    const returned = knownCollections(ctx);
    const found = ids.map((id) => returned.get(id));
    const missing = ids.filter((_, i) => !found[i]);
    const rows = missing.length ? await collectionsByIds(ctx.em, missing) : [];
    const loaded = new Map(rows.map((row, i) => [missing[i], row]));
    return ids.map((id, i) => found[i] ?? loaded.get(id) ?? new NotFoundError(`Collection not found: '${id}'.`, { code: 'collection_not_found' }));
  },
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    slug: t.exposeString('slug', { description: 'Unique in the workspace, never UUID-shaped; usable wherever the id is.' }),
    workspaceId: t.exposeID('workspaceId', { description: 'The owning workspace.' }),
    parentCollectionId: t.exposeID('parentId', { nullable: true, description: 'The parent; null at the top level.' }),
    isDefault: t.exposeBoolean('isDefault', { description: 'True for the workspace’s default collection (cannot be archived or moved).' }),
    status: t.expose('status', { type: CollectionStatusEnum, description: 'Active or archived.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    lastUpdatedAt: t.expose('lastUpdatedAt', { type: 'DateTime', description: 'When it was last renamed, moved or archived.' }),
  }),
});

builder.objectFields(PromptRef, (t) => ({
  collection: t.field({
    type: CollectionRef,
    description: 'The collection holding the prompt.',
    resolve: (prompt) => prompt.collectionId,
  }),
}));

builder.objectFields(CollectionRef, (t) => ({
  workspace: t.loadable({
    type: WorkspaceRef,
    description: 'The owning workspace.',
    load: async (ids: string[], ctx) => {
      const rows = await workspacesByIds(ctx.em, ids);
      return rows.map((row, i) => row ?? new NotFoundError(`Workspace not found: '${ids[i]}'.`, { code: 'workspace_not_found' }));
    },
    resolve: (collection) => collection.workspaceId,
  }),
  parent: t.field({
    type: CollectionRef,
    nullable: true,
    description: 'The parent collection; null at the top level.',
    resolve: (collection) => collection.parentId ?? null,
  }),
  ancestors: t.loadableList({
    type: CollectionRef,
    description: 'Every collection above this one, from the top level down to the parent.',
    load: async (ids: string[], ctx) => (await ancestorsOf(ctx.em, ids)).map((chain) => known(ctx, chain)),
    resolve: (collection) => collection.id,
  }),
  childCollections: t.loadableList({
    type: CollectionRef,
    description: 'Direct, non-archived child collections, by name.',
    load: async (ids: string[], ctx) => (await childCollectionsOf(ctx.runtime, ctx.em, ids)).map((level) => known(ctx, level)),
    resolve: (collection) => collection.id,
  }),
  prompts: t.loadableList({
    type: PromptRef,
    description: 'Non-archived prompts of the collection, by name.',
    load: (ids: string[], ctx) => promptsOf(ctx.em, ids),
    resolve: (collection) => collection.id,
  }),
  details: t.expose('details', {
    type: CollectionDetailsRef,
    description: 'Counts and latest changes of the direct children and prompts, from live data.',
  }),
}));

const CollectionPageRef = builder.objectRef<collections.CollectionPage>('CollectionPage').implement({
  description: 'One page of collections and the number of all that match.',
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'Collections that match, on every page.' }),
    data: t.field({ type: [CollectionRef], description: 'This page, by name.', resolve: (page, _args, ctx) => readAgain(ctx, page.data) }),
  }),
});

builder.queryFields((t) => ({
  collection: t.field({
    type: CollectionRef,
    description: 'One collection by id or slug (archived ones too). Another workspace’s or organisation’s: not found.',
    args: {
      idOrSlug: t.arg.string({ required: true, description: 'UUID or slug.' }),
      workspaceId: t.arg.string({ description: 'Workspace (id or slug) to resolve a slug in; default: any the caller sees, its default workspace first.' }),
    },
    resolve: async (_root, args, ctx) => known(ctx, await collections.getCollection(ctx, args.idOrSlug, args.workspaceId)),
  }),
  collections: t.field({
    type: CollectionPageRef,
    description: 'Active collections of one workspace, at every level, by name.',
    args: {
      workspaceId: t.arg.string({ description: 'Workspace id or slug; default: the caller’s (an organisation key: its default workspace).' }),
      search: t.arg.string({ description: 'Part of the name, case-insensitive.' }),
      currentPage: t.arg.int({ description: 'Zero-based page number (default 0).' }),
      pageSize: t.arg.int({ description: `Collections per page, 0 to ${collections.MAX_PAGE_SIZE} (default ${collections.DEFAULT_PAGE_SIZE}); 0 gives only the total.` }),
    },
    resolve: (_root, args, ctx) => collections.listCollections(ctx, args),
  }),
}));

const CreateCollectionInput = contractInputType('CreateCollectionInput', 'A new collection.', contract.createCollectionContract);
const UpdateCollectionInput = contractInputType('UpdateCollectionInput', 'A rename. The slug stays as it is, so links keep working.', contract.updateCollectionContract);
const MoveCollectionInput = contractInputType('MoveCollectionInput', 'A new place in the tree.', contract.moveCollectionContract);

builder.mutationFields((t) => ({
  createCollection: t.field({
    type: CollectionRef,
    description: 'Creates a collection, at the top level or under a parent.',
    args: { input: t.arg({ type: CreateCollectionInput, required: true, description: 'The collection.' }) },
    resolve: async (_root, { input }, ctx) => readOneAgain(ctx, await collections.createCollection(ctx, parseInput(contract.createCollectionContract, input))),
  }),
  updateCollection: t.field({
    type: CollectionRef,
    description: 'Renames a collection.',
    args: {
      collectionId: t.arg.string({ required: true, description: 'Collection UUID or slug.' }),
      input: t.arg({ type: UpdateCollectionInput, required: true, description: 'The change.' }),
    },
    resolve: async (_root, args, ctx) => readOneAgain(ctx, await collections.renameCollection(ctx, args.collectionId, parseInput(contract.updateCollectionContract, args.input))),
  }),
  moveCollection: t.field({
    type: CollectionRef,
    description: 'Moves a collection under another one or to the top level; under itself or a descendant is a 400.',
    args: {
      collectionId: t.arg.string({ required: true, description: 'Collection UUID or slug.' }),
      input: t.arg({ type: MoveCollectionInput, required: true, description: 'The new place.' }),
    },
    resolve: async (_root, args, ctx) => readOneAgain(ctx, await collections.moveCollection(ctx, args.collectionId, parseInput(contract.moveCollectionContract, args.input))),
  }),
  archiveCollection: t.field({
    type: CollectionRef,
    description: 'Archives a collection with its child collections and prompts; the default collection cannot be archived.',
    args: { collectionId: t.arg.string({ required: true, description: 'Collection UUID or slug.' }) },
    resolve: async (_root, args, ctx) => readOneAgain(ctx, await collections.archiveCollection(ctx, args.collectionId)),
  }),
}));
