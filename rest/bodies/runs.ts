import { z } from 'zod';
import { queryInteger, runsContract as contract } from '../../schema/contracts.js';

/*
 * Runs: each body is its operation's contract (src/modules/runs/runs.contract.ts, the same schema
 * the GraphQL resolver parses with) plus `stream`, which only REST has: it answers with SSE.
 */

const stream = { stream: z.boolean().nullish() };

export const createAssistantBody = contract.createAssistantContract;
export const modifyAssistantBody = contract.modifyAssistantContract;
export const modifyThreadBody = contract.modifyThreadContract;
export const modifyMetadataBody = contract.modifyMetadataContract;
export const createThreadBody = contract.createThreadContract;
export const createMessageBody = contract.createMessageContract;
export const createRunBody = contract.createRunContract.extend(stream);
export const createThreadAndRunBody = contract.createThreadAndRunContract.extend(stream);
export const submitToolOutputsBody = contract.submitToolOutputsContract.extend(stream);

export const listQuery = z.object({
  limit: queryInteger().optional(),
  order: z.string().optional(),
  after: z.string().optional(),
  before: z.string().optional(),
});

export const listMessagesQuery = listQuery.extend({ run_id: z.string().optional() });

export const eventsQuery = z.object({
  after: queryInteger({ min: 0 }).optional(),
});
