import { createApiKeyBody, createWorkspaceBody } from '../bodies/admin.js';
import { graphqlInput } from '../../schema/contracts.js';
import { listBody, type RouteRow } from '../route.js';

type Wire = Record<string, any>;

/**
 * A workspace as Portkey's Workspace: whether it is the organisation's default is the document's
 * `defaults.is_default` (an integer there). The organisation is the caller's own, so not repeated.
 */
const workspaceWire = ({ is_default, ...workspace }: Wire): Wire => ({ ...workspace, defaults: { is_default: is_default ? 1 : 0, object: 'workspace' } });

/** Tenancy administration: workspaces and API keys. */
export const adminRoutes: RouteRow[] = [
  { method: 'GET', path: '/v1/admin/workspaces', operation: 'RestListWorkspaces', result: (data) => listBody(data.workspaces, workspaceWire) },
  {
    method: 'POST',
    path: '/v1/admin/workspaces',
    operation: 'RestCreateWorkspace',
    body: createWorkspaceBody,
    variables: ({ body }) => ({ input: graphqlInput(createWorkspaceBody, body) }),
    result: (data) => workspaceWire(data.createWorkspace),
  },
  {
    method: 'GET',
    path: '/v1/admin/workspaces/:id',
    operation: 'RestGetWorkspace',
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => workspaceWire(data.workspace),
  },
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
