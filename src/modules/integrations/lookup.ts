import type { EntityManager } from '@mikro-orm/core';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { isUuid } from '../../lib/ids.js';
import { slugProblem } from '../tenancy/tenancy.contract.js';
import { IntegrationSchema, type Integration } from './integration.entity.js';

// Slugs of integrations and providers follow the one slug rule (ids are accepted where slugs are).
export { SLUG_MAX, slugProblem } from '../tenancy/tenancy.contract.js';

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
