import { z } from 'zod';
import { collectionsContract, pageQuery } from '../../schema/contracts.js';

/** The operations' contracts (src/modules/collections/collections.contract.ts), as the resolvers parse them. */
export const createCollectionBody = collectionsContract.createCollectionContract;
export const updateCollectionBody = collectionsContract.updateCollectionContract;

export const getCollectionQuery = z.object({
  workspace_id: z.string().optional(),
});

export const listCollectionsQuery = z.object({
  workspace_id: z.string().optional(),
  search: z.string().optional(),
  ...pageQuery,
});
