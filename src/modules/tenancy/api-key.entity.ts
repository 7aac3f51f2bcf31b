import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const API_KEY_TYPES = ['organisation', 'workspace'] as const;
export type ApiKeyType = (typeof API_KEY_TYPES)[number];

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: (p) => ({
    id: p.uuid().primary(),
    organisationId: p.uuid().index(),
    /** Set for workspace keys only. */
    workspaceId: p.uuid().nullable(),
    type: p.enum(['organisation', 'workspace'] as const),
    name: p.string(),
    /** SHA-256 of the key; the key itself is shown once and never stored. */
    keyHash: p.string().unique(),
    /** The first characters of the key, enough to recognise it in a list. */
    keyPrefix: p.string(),
    status: p.enum(['active', 'revoked'] as const),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
  }),
});

export type ApiKey = InferEntity<typeof ApiKeySchema>;
