/**
 * Tenancy administration's operation inputs (workspaces, API keys), each one schema in wire terms:
 * the REST row validates its body with it, the GraphQL resolver parses its input with it, and
 * GraphQL's input types are derived from it (schema/contract-input.ts), so both doors refuse the
 * same input with the same error. Rules that need stored data or the caller stay with the service:
 * a taken slug (409), which workspaces a key may name, the organisation-key requirement, and
 * names (`validateName`, which every domain shares).
 */
import { z } from 'zod';
import { oneOf, refuseWhole } from '../../lib/contract.js';
import { isUuid } from '../../lib/ids.js';

export const SLUG_PATTERN = /^[a-zA-Z0-9_-]+$/;
export const SLUG_MAX = 64;
export const API_KEY_TYPES = ['organisation', 'workspace'] as const;

/** A workspace named by id or slug, wherever an input takes `workspace_id`. */
export const workspaceId = z.string().superRefine((value, ctx) => {
  if (!value.trim()) refuseWhole(ctx, 'invalid_value', "'workspace_id' must be a workspace id or slug.");
});

/**
 * The rule for every slug a caller chooses (workspaces, integrations, providers): 1–64 of
 * `[a-zA-Z0-9_-]`, and usable wherever an id is, so never UUID-shaped. The problem's message, or null.
 */
export function slugProblem(slug: unknown, param: string): string | null {
  if (typeof slug !== 'string' || !SLUG_PATTERN.test(slug) || slug.length > SLUG_MAX || isUuid(slug)) {
    return `'${param}' must be 1–${SLUG_MAX} letters, digits, '-' or '_' (and not a UUID).`;
  }
  return null;
}

const slug = z.string().superRefine((value, ctx) => {
  const problem = slugProblem(value, 'slug');
  if (problem) refuseWhole(ctx, 'invalid_value', problem);
});

export const createWorkspaceContract = z.object({
  name: z.string().describe('Display name (1–255 characters).'),
  slug: slug.nullish().describe('Unique slug; derived from the name when omitted.'),
  description: z.string().nullish().describe('Free text.'),
});

export const createApiKeyContract = z.object({
  name: z.string().describe('Display name (1–255 characters).'),
  type: oneOf(API_KEY_TYPES).describe('`organisation` (every workspace of the organisation) or `workspace` (one).'),
  workspace_id: workspaceId.nullish().describe('Workspace (id or slug) of a workspace key; default: the caller’s. Not for organisation keys.'),
});

export type CreateWorkspaceInput = z.input<typeof createWorkspaceContract>;
export type CreateApiKeyInput = z.input<typeof createApiKeyContract>;
