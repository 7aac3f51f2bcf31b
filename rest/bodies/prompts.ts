import { z } from 'zod';
import { pageQuery, promptsContract } from '../../schema/contracts.js';

/** The operations' contracts (src/modules/collections/prompts.contract.ts), as the resolvers parse them. */
export const createPromptBody = promptsContract.createPromptContract;
export const updatePromptBody = promptsContract.updatePromptContract;
export const renderPromptBody = promptsContract.renderPromptContract;
export const updatePromptVersionBody = promptsContract.updatePromptVersionContract;
export const makeDefaultPromptBody = promptsContract.makeDefaultPromptContract;

export const listPromptsQuery = z.object({
  collection_id: z.string().optional(),
  workspace_id: z.string().optional(),
  search: z.string().optional(),
  ...pageQuery,
});
