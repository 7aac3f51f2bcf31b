import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { RateLimit, UsageLimit } from './limits.js';

/**
 * One workspace's access to one integration. Every workspace of the organisation has a row for
 * every active integration (made when either is created), so "the access" always has an id that
 * usage buckets and rate-limit counters can be keyed by.
 */
export const WorkspaceAccessSchema = defineEntity({
  name: 'WorkspaceAccess',
  tableName: 'integration_workspace_access',
  properties: (p) => ({
    id: p.uuid().primary(),
    organisationId: p.uuid(),
    integrationId: p.uuid(),
    workspaceId: p.uuid().index(),
    enabled: p.boolean(),
    usageLimit: p.json<UsageLimit>().nullable(),
    rateLimit: p.json<RateLimit>().nullable(),
    /**
     * True while the row follows the integration's global access (never set one by one, or reset
     * to it by `override_existing_workspace_access`); such rows change when the global access does.
     */
    inheritsGlobal: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
  uniques: [{ properties: ['integrationId', 'workspaceId'] }],
});

export type WorkspaceAccess = InferEntity<typeof WorkspaceAccessSchema>;
