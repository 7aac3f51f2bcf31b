import type { RouteRow } from '../route.js';

export const collectionsRoutes: RouteRow[] = [];
