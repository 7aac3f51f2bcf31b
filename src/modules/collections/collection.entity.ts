import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const COLLECTION_STATUSES = ['active', 'archived'] as const;
export type CollectionStatus = (typeof COLLECTION_STATUSES)[number];

/**
 * A node of a workspace's collection tree. The parent is a plain id column: the tree is read level
 * by level in batches (collection-loaders.ts), never by walking relations one row at a time.
 */
export const CollectionSchema = defineEntity({
  name: 'Collection',
  tableName: 'collections',
  properties: (p) => ({
    id: p.uuid().primary(),
    organisationId: p.uuid().index(),
    workspaceId: p.uuid().index(),
    /** Null for a top-level collection. */
    parentId: p.uuid().nullable().index(),
    name: p.string(),
    slug: p.string(),
    isDefault: p.boolean(),
    status: p.enum(['active', 'archived'] as const),
    createdAt: p.datetime(),
    lastUpdatedAt: p.datetime(),
    /*
     * Its details (collection-details.ts): counts and latest changes of its direct non-archived
     * child collections and prompts, stored by every write that changes them, in its transaction,
     * so a level of thousands of children reads them as columns instead of four lookups per child.
     */
    childCollectionsCount: p.integer().default(0),
    childCollectionsLastUpdatedAt: p.datetime().nullable(),
    promptsCount: p.integer().default(0),
    promptsLastUpdatedAt: p.datetime().nullable(),
    /*
     * The version of its level of children, bumped by the database's triggers on every write of a
     * child (migration 0012) and read only by raw statements (collection-loaders.ts). Lazy: the ORM
     * never loads it, so an entity loaded before a bump never writes an older value back.
     */
    childrenVersion: p.integer().default(0).lazy(true, false),
  }),
  uniques: [{ properties: ['workspaceId', 'slug'] }],
});

export type Collection = InferEntity<typeof CollectionSchema>;
