import { z } from 'zod';
import { guardrailsContract, pageQuery } from '../../schema/contracts.js';

/** The operations' contracts (src/modules/guardrails/guardrails.contract.ts), as the resolvers parse them. */
export const createGuardrailBody = guardrailsContract.createGuardrailContract;
export const updateGuardrailBody = guardrailsContract.updateGuardrailContract;

export const listGuardrailsQuery = z.object({
  workspace_id: z.string().optional(),
  status: z.enum(['active', 'archived']).optional(),
  ...pageQuery,
});
