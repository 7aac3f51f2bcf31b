import { z } from 'zod';

/** `GET /v1/logs` filters and paging. */
export const listLogsQuery = z.object({
  workspace_id: z.string().optional(),
  api_key_id: z.string().optional(),
  virtual_key: z.string().optional(),
  model: z.string().optional(),
  status: z.coerce.number().int().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  limit: z.coerce.number().int().optional(),
  after: z.string().optional(),
});
