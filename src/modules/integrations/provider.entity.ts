import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** A provider: the virtual key a workspace's callers send to use an integration. */
export const ProviderSchema = defineEntity({
  name: 'Provider',
  tableName: 'providers',
  properties: (p) => ({
    id: p.uuid().primary(),
    organisationId: p.uuid(),
    workspaceId: p.uuid().index(),
    integrationId: p.uuid().index(),
    /** The virtual key. */
    slug: p.string(),
    /** The slug while active, null once archived: unique per workspace among active providers. */
    activeSlug: p.string().nullable(),
    name: p.string(),
    note: p.text().nullable(),
    status: p.enum(['active', 'archived'] as const),
    /** Guardrail ids or slugs checked on the request (the guardrails domain gives them meaning). */
    inputGuardrails: p.json<string[]>(),
    /** Guardrail ids or slugs checked on the model's answer. */
    outputGuardrails: p.json<string[]>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
  uniques: [{ properties: ['workspaceId', 'activeSlug'] }],
});

export type Provider = InferEntity<typeof ProviderSchema>;
