import { z } from 'zod';

export const createWorkspaceBody = z.object({
  name: z.string(),
  slug: z.string().nullish(),
  description: z.string().nullish(),
});

export const createApiKeyBody = z.object({
  name: z.string(),
  type: z.enum(['organisation', 'workspace']),
  workspace_id: z.string().nullish(),
});
