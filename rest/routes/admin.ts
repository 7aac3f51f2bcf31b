import { createApiKeyBody, createWorkspaceBody } from '../bodies/admin.js';
import { listBody, type RouteRow } from '../route.js';

/** Tenancy administration: workspaces and API keys. */
export const adminRoutes: RouteRow[] = [
  { method: 'GET', path: '/v1/admin/workspaces', operation: 'RestListWorkspaces', result: (data) => listBody(data.workspaces) },
  {
    method: 'POST',
    path: '/v1/admin/workspaces',
    operation: 'RestCreateWorkspace',
    body: createWorkspaceBody,
    variables: ({ body }) => ({ input: { name: body.name, slug: body.slug, description: body.description } }),
  },
  { method: 'GET', path: '/v1/admin/workspaces/:id', operation: 'RestGetWorkspace', variables: ({ params }) => ({ id: params.id }) },
  { method: 'GET', path: '/v1/admin/api-keys', operation: 'RestListApiKeys', result: (data) => listBody(data.apiKeys) },
  {
    method: 'POST',
    path: '/v1/admin/api-keys',
    operation: 'RestCreateApiKey',
    body: createApiKeyBody,
    variables: ({ body }) => ({ input: { name: body.name, type: body.type, workspaceId: body.workspace_id } }),
    result: (data) => ({ ...data.createApiKey.apiKey, key: data.createApiKey.key }),
  },
  { method: 'DELETE', path: '/v1/admin/api-keys/:id', operation: 'RestRevokeApiKey', variables: ({ params }) => ({ id: params.id }) },
];
