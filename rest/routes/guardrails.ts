import type { RouteRow } from '../route.js';

export const guardrailsRoutes: RouteRow[] = [];
