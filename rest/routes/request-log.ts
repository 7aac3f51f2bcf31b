import { listLogsQuery } from '../bodies/request-log.js';
import type { RouteRow } from '../route.js';

/** The request log: one record per model call, newest first. */
export const requestLogRoutes: RouteRow[] = [
  {
    method: 'GET',
    path: '/v1/logs',
    operation: 'RestListRequestLogs',
    query: listLogsQuery,
    variables: ({ query }) => ({
      workspaceId: query.workspace_id,
      apiKeyId: query.api_key_id,
      virtualKey: query.virtual_key,
      model: query.model,
      status: query.status,
      from: query.from,
      to: query.to,
      limit: query.limit,
      after: query.after,
    }),
    result: (data) => ({ object: 'list', ...data.requestLogs }),
  },
];
