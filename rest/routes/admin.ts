import { createApiKeyBody, createWorkspaceBody } from '../bodies/admin.js';
import { graphqlInput } from '../../schema/contracts.js';
import { listBody, type RouteRow } from '../route.js';

/** Tenancy administration: workspaces and API keys. */
export const adminRoutes: RouteRow[] = [
  { method: 'GET', path: '/v1/admin/workspaces', operation: 'RestListWorkspaces', result: (data) => listBody(data.workspaces) },
  {
    method: 'POST',
    path: '/v1/admin/workspaces',
    operation: 'RestCreateWorkspace',
    body: createWorkspaceBody,
    variables: ({ body }) => ({ input: graphqlInput(createWorkspaceBody, body) }),
  },
  { method: 'GET', path: '/v1/admin/workspaces/:id', operation: 'RestGetWorkspace', variables: ({ params }) => ({ id: params.id }) },
  { method: 'GET', path: '/v1/admin/api-keys', operation: 'RestListApiKeys', result: (data) => listBody(data.apiKeys) },
  {
    method: 'POST',
    path: '/v1/admin/api-keys',
    operation: 'RestCreateApiKey',
    body: createApiKeyBody,
    variables: ({ body }) => ({ input: graphqlInput(createApiKeyBody, body) }),
    result: (data) => ({ ...data.createApiKey.apiKey, key: data.createApiKey.key }),
  },
  { method: 'DELETE', path: '/v1/admin/api-keys/:id', operation: 'RestRevokeApiKey', variables: ({ params }) => ({ id: params.id }) },
];
