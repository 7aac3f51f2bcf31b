import type { RouteRow } from '../route.js';

export const runsRoutes: RouteRow[] = [];
