import type { RouteRow } from '../route.js';

export const policiesRoutes: RouteRow[] = [];
