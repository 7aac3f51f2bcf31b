import { z } from 'zod';
import { queryInteger } from '../../schema/contracts.js';

/** `GET /v1/logs` filters and paging. */
export const listLogsQuery = z.object({
  workspace_id: z.string().optional(),
  api_key_id: z.string().optional(),
  virtual_key: z.string().optional(),
  model: z.string().optional(),
  status: queryInteger().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  limit: queryInteger().optional(),
  after: z.string().optional(),
});
