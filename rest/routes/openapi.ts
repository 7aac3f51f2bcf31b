import { openApiDocument } from '../openapi.js';
import type { RouteRow } from '../route.js';

/** The OpenAPI document of every `/v1` route, generated from the table itself; public: it describes the API, not anyone's data. */
export const openApiRoutes: RouteRow[] = [{ method: 'GET', path: '/v1/openapi.json', summary: 'This OpenAPI 3.1 document of every /v1 route (no API key needed).', document: openApiDocument }];
