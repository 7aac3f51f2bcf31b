import type { RouteRow } from '../route.js';

export const integrationsRoutes: RouteRow[] = [];
