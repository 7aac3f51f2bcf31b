import {
  ancestorsOf,
  childCollectionsOf,
  collectionDetailsOf,
  collectionsByIds,
  detailsReadWith,
  promptsOf,
  workspacesByIds,
  type CollectionDetails,
} from '../src/modules/collections/collection-loaders.js';
import type { Collection } from '../src/modules/collections/collection.entity.js';
import * as collections from '../src/modules/collections/collections.service.js';
import { NotFoundError } from '../src/errors.js';
import * as contract from '../src/modules/collections/collections.contract.js';
import { builder } from './builder.js';
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

// Loadable by collection id; a collection read with its details (a level of children) answers
// them at once, without a promise per collection.
const CollectionDetailsRef = builder.loadableObject<CollectionDetails, string, [], 'CollectionDetails'>('CollectionDetails', {
  description: 'Computed from live data: direct, non-archived children and prompts of a collection.',
  load: (ids: string[], ctx) => collectionDetailsOf(ctx.em, ids),
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

export const CollectionRef = builder.loadableObject('Collection', {
  description: 'A node of a workspace’s collection tree: holds prompts and child collections.',
  load: async (ids: string[], ctx) => {
    const rows = await collectionsByIds(ctx.em, ids);
    return rows.map((row, i) => row ?? new NotFoundError(`Collection not found: '${ids[i]}'.`, { code: 'collection_not_found' }));
  },
  // Collections a resolver already returned (a level of a tree) answer later `parent` loads.
  cacheResolved: (collection: Collection) => collection.id,
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
    load: (ids: string[], ctx) => ancestorsOf(ctx.em, ids),
    resolve: (collection) => collection.id,
  }),
  childCollections: t.loadableList({
    type: CollectionRef,
    description: 'Direct, non-archived child collections, by name.',
    load: (ids: string[], ctx) => childCollectionsOf(ctx.em, ids),
    resolve: (collection) => collection.id,
  }),
  prompts: t.loadableList({
    type: PromptRef,
    description: 'Non-archived prompts of the collection, by name.',
    load: (ids: string[], ctx) => promptsOf(ctx.em, ids),
    resolve: (collection) => collection.id,
  }),
  details: t.field({
    type: CollectionDetailsRef,
    description: 'Counts and latest changes of the direct children and prompts, from live data.',
    resolve: (collection) => detailsReadWith(collection) ?? collection.id,
  }),
}));

const CollectionPageRef = builder.objectRef<collections.CollectionPage>('CollectionPage').implement({
  description: 'One page of collections and the number of all that match.',
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'Collections that match, on every page.' }),
    data: t.field({ type: [CollectionRef], description: 'This page, by name.', resolve: (page) => page.data }),
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
    resolve: (_root, args, ctx) => collections.getCollection(ctx, args.idOrSlug, args.workspaceId),
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
    resolve: (_root, { input }, ctx) => collections.createCollection(ctx, parseInput(contract.createCollectionContract, input)),
  }),
  updateCollection: t.field({
    type: CollectionRef,
    description: 'Renames a collection.',
    args: {
      collectionId: t.arg.string({ required: true, description: 'Collection UUID or slug.' }),
      input: t.arg({ type: UpdateCollectionInput, required: true, description: 'The change.' }),
    },
    resolve: (_root, args, ctx) => collections.renameCollection(ctx, args.collectionId, parseInput(contract.updateCollectionContract, args.input)),
  }),
  moveCollection: t.field({
    type: CollectionRef,
    description: 'Moves a collection under another one or to the top level; under itself or a descendant is a 400.',
    args: {
      collectionId: t.arg.string({ required: true, description: 'Collection UUID or slug.' }),
      input: t.arg({ type: MoveCollectionInput, required: true, description: 'The new place.' }),
    },
    resolve: (_root, args, ctx) => collections.moveCollection(ctx, args.collectionId, parseInput(contract.moveCollectionContract, args.input)),
  }),
  archiveCollection: t.field({
    type: CollectionRef,
    description: 'Archives a collection with its child collections and prompts; the default collection cannot be archived.',
    args: { collectionId: t.arg.string({ required: true, description: 'Collection UUID or slug.' }) },
    resolve: (_root, args, ctx) => collections.archiveCollection(ctx, args.collectionId),
  }),
}));
