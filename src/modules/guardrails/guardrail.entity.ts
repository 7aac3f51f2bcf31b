import { defineEntity, type InferEntity } from '@mikro-orm/core';
import type { GuardrailActions, NormalizedCheck } from './validate.js';

export const GUARDRAIL_STATUSES = ['active', 'archived'] as const;
export type GuardrailStatus = (typeof GUARDRAIL_STATUSES)[number];

/**
 * A guardrail: a named, versioned set of checks and actions. The row carries the latest version's
 * checks and actions (written in the same transaction as that version), so the data plane and the
 * read routes need no join; `guardrail_versions` keeps every version ever written.
 */
export const GuardrailSchema = defineEntity({
  name: 'Guardrail',
  tableName: 'guardrails',
  properties: (p) => ({
    id: p.uuid().primary(),
    /** `guard_` + 24 alphanumerics; usable wherever the id is. */
    slug: p.string().unique(),
    organisationId: p.uuid().index(),
    /** Null: organisation-wide (usable in every workspace of the organisation). */
    workspaceId: p.uuid().nullable().index(),
    name: p.string(),
    status: p.enum(['active', 'archived'] as const),
    /** The API key that created it. */
    ownerId: p.uuid(),
    /** The API key that wrote the latest version (or archived it). */
    updatedBy: p.uuid(),
    /** The latest version's id and number (1, 2, …). */
    versionId: p.uuid(),
    version: p.integer(),
    checks: p.json<NormalizedCheck[]>(),
    actions: p.json<GuardrailActions>(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    archivedAt: p.datetime().nullable(),
  }),
});

export type Guardrail = InferEntity<typeof GuardrailSchema>;
