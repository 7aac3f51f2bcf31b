/**
 * The route template a request matched (`/v1/integrations/:slug/workspaces`), for metric labels
 * and access logs. Labels are templates, never raw paths, so their number stays bounded however
 * many distinct URLs callers send; every path nobody serves (404, 405) shares one label.
 */
export const UNKNOWN_ROUTE = 'unknown';

const templates = new WeakMap<Request, string>();

export function recordRoute(request: Request, template: string): void {
  templates.set(request, template);
}

export function routeOf(request: Request): string {
  return templates.get(request) ?? UNKNOWN_ROUTE;
}
