/**
 * The collections domain's operation inputs, each one schema in wire terms: the REST row validates
 * its body with it, the GraphQL resolver parses its input with it, and GraphQL's input types are
 * derived from it (schema/contract-input.ts). Name rules (length, characters) stay with the
 * service's `validateName`, which workspaces share.
 */
import { z } from 'zod';

export const createCollectionContract = z.object({
  name: z.string().describe('Display name (1–255 characters); the slug is derived from it.'),
  workspace_id: z.string().nullish().describe('Workspace id or slug; default: the parent’s, else the caller’s.'),
  parent_collection_id: z.string().nullish().describe('Parent collection UUID, in the same workspace; omitted: top level.'),
});

export const updateCollectionContract = z.object({
  name: z.string().describe('New display name (1–255 characters).'),
});

export const moveCollectionContract = z.object({
  parent_collection_id: z.string().nullish().describe('New parent UUID in the same workspace; null or omitted: the top level.'),
});

export type CreateCollectionInput = z.output<typeof createCollectionContract>;
export type UpdateCollectionInput = z.output<typeof updateCollectionContract>;
export type MoveCollectionInput = z.output<typeof moveCollectionContract>;
