import { z } from 'zod';
import { collectionsContract } from '../../schema/contracts.js';

/**
 * Query strings carry text: an integer parameter is digits (a sign allowed, so that -1 reaches the
 * range check and its message) within GraphQL's 32-bit Int.
 */
const integerText = z
  .string()
  .regex(/^-?\d+$/, 'expected an integer.')
  .transform(Number)
  .refine((n) => Math.abs(n) <= 2 ** 31 - 1, 'expected an integer within ±2147483647.');

/** The operations' contracts (src/modules/collections/collections.contract.ts), as the resolvers parse them. */
export const createCollectionBody = collectionsContract.createCollectionContract;
export const updateCollectionBody = collectionsContract.updateCollectionContract;

export const getCollectionQuery = z.object({
  workspace_id: z.string().optional(),
});

export const listCollectionsQuery = z.object({
  workspace_id: z.string().optional(),
  search: z.string().optional(),
  current_page: integerText.optional(),
  page_size: integerText.optional(),
});
