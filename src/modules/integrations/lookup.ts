import type { EntityManager } from '@mikro-orm/core';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { isUuid } from '../../lib/ids.js';
import { SLUG_PATTERN } from '../tenancy/tenancy.service.js';
import { IntegrationSchema, type Integration } from './integration.entity.js';

export const SLUG_MAX = 64;

/** Slugs of integrations and providers: 1–64 of `[a-zA-Z0-9_-]`, and not UUID-shaped (ids are accepted where slugs are). */
export function slugProblem(slug: unknown, param: string): string | null {
  if (typeof slug !== 'string' || !SLUG_PATTERN.test(slug) || slug.length > SLUG_MAX || isUuid(slug)) {
    return `'${param}' must be 1–${SLUG_MAX} letters, digits, '-' or '_' (and not a UUID).`;
  }
  return null;
}

export function validateSlug(slug: unknown, param = 'slug'): string {
  const problem = slugProblem(slug, param);
  if (problem) throw new BadRequestError(problem, { param, code: 'invalid_value' });
  return slug as string;
}

/** An active integration of the organisation, by slug or id (404 otherwise). */
export async function findIntegration(em: EntityManager, organisationId: string, slugOrId: string, param: string | null = null): Promise<Integration> {
  const where = isUuid(slugOrId) ? { id: slugOrId.toLowerCase() } : { activeSlug: slugOrId };
  const integration = await em.findOne(IntegrationSchema, { ...where, organisationId, status: 'active' });
  if (!integration) {
    throw new NotFoundError(`No integration found with slug '${slugOrId}'.`, { param, code: 'integration_not_found' });
  }
  return integration;
}
