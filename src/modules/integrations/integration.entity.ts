import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { AccessSettings, IntegrationConfigurations } from './limits.js';

import { AI_PROVIDER_IDS } from '../runs/models/providers.js';

export { AI_PROVIDER_IDS, type AiProviderId } from '../runs/models/providers.js';

export const IntegrationSchema = defineEntity({
  name: 'Integration',
  tableName: 'integrations',
  properties: (p) => ({
    id: p.uuid().primary(),
    organisationId: p.uuid().index(),
    slug: p.string(),
    /**
     * The slug while the integration is active, null once archived: the unique index below then
     * holds slugs unique among active integrations (SQLite treats NULLs as distinct), so a deleted
     * integration's slug can be used again, and two processes racing for one slug cannot both win.
     */
    activeSlug: p.string().nullable(),
    name: p.string(),
    description: p.text().nullable(),
    aiProviderId: p.enum(AI_PROVIDER_IDS),
    /** The provider's secret key, AES-256-GCM encrypted (src/lib/crypto.ts); never returned. */
    encryptedKey: p.text().nullable(),
    /** The key as shown to callers (last four characters), computed once when the key is written. */
    maskedKey: p.string().nullable(),
    configurations: p.json<IntegrationConfigurations>(),
    status: p.enum(['active', 'archived'] as const),
    /** Access for workspaces not configured one by one, including workspaces created later; null: none. */
    globalAccess: p.json<AccessSettings>().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
  uniques: [{ properties: ['organisationId', 'activeSlug'] }],
});

export type Integration = InferEntity<typeof IntegrationSchema>;
