import type { RouteRow } from './route.js';
import { adminRoutes } from './routes/admin.js';
import { chatRoutes } from './routes/chat.js';
import { collectionsRoutes } from './routes/collections.js';
import { guardrailsRoutes } from './routes/guardrails.js';
import { integrationsRoutes } from './routes/integrations.js';
import { openApiRoutes } from './routes/openapi.js';
import { policiesRoutes } from './routes/policies.js';
import { promptsRoutes } from './routes/prompts.js';
import { requestLogRoutes } from './routes/request-log.js';
import { runsRoutes } from './routes/runs.js';

/**
 * THE route table: one row per documented method and path. Each domain keeps its rows in
 * `routes/<domain>.ts` (so domains change independently); this list is their union, and a test
 * holds it equal to the route list in README.md.
 */
export const routes: RouteRow[] = [
  ...adminRoutes,
  ...integrationsRoutes,
  ...collectionsRoutes,
  ...promptsRoutes,
  ...policiesRoutes,
  ...guardrailsRoutes,
  ...runsRoutes,
  ...chatRoutes,
  ...requestLogRoutes,
  ...openApiRoutes,
];
