/**
 * The usage-limit policies' operation inputs, each one schema in wire terms: the REST row validates
 * its body with it, the GraphQL resolver parses its input with it, and GraphQL's input types are
 * derived from it (schema/contract-input.ts). Rules that need stored data stay with the service:
 * the limits (an update's threshold is checked against the stored limit), the workspace of a
 * `workspace_id` condition, and names (`validateName`, shared with workspaces). Key order decides
 * which problem is reported first.
 */
import { z } from 'zod';
import { refuseWhole } from '../../lib/contract.js';
import { workspaceId } from '../tenancy/tenancy.contract.js';
import { KEYS_DESCRIPTION, validateConditions, validateGroupBy, type ListIssue } from '../usage/conditions.js';
import { PERIODIC_RESETS } from '../usage/usage-periods.js';

export const POLICY_TYPES = ['cost', 'tokens'] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];
export const POLICY_STATUSES = ['active', 'archived'] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];
export const DEFAULT_POLICY_NAME = 'Usage limits policy';
/** An entity's (value key's) status this period; `bucketStatus` decides it. */
export const ENTITY_STATUSES = ['active', 'exhausted'] as const;

/** One of `values`, refused as `Invalid value for '<param>': must be one of 'a', 'b'.` */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, {
    errorMap: (issue, ctx) =>
      issue.code === 'invalid_enum_value' ? { message: `must be one of ${values.map((v) => `'${v}'`).join(', ')}.` } : { message: ctx.defaultError },
  });

/** Reports the first of a list's `issues` at its place in the list. */
function refuseFirst(ctx: z.RefinementCtx, issues: ListIssue[]): void {
  if (issues.length) refuseWhole(ctx, 'invalid_value', issues[0].message, issues[0].at);
}

const condition = z.object({
  key: z.string().describe(KEYS_DESCRIPTION),
  value: z.string().describe('The value to match exactly, or `*`.'),
});

const groupByKey = z.object({
  key: z.string().describe(KEYS_DESCRIPTION),
});

/** The list's filters (paging is `pageOf`'s); a REST query and GraphQL's arguments are both parsed by it. */
export const listPoliciesContract = z.object({
  workspace_id: workspaceId.nullish().describe('Only this workspace (UUID or slug).'),
  status: oneOf(POLICY_STATUSES).nullish().describe('Default: active.'),
  type: oneOf(POLICY_TYPES).nullish().describe('Only this type.'),
});

/** The entity list's filters (paging is `pageOf`'s), for a REST query and GraphQL's arguments alike. */
export const listPolicyEntitiesContract = z.object({
  status: oneOf(ENTITY_STATUSES).nullish().describe('Only active or only exhausted entities.'),
  search: z.string().nullish().describe('Only value keys containing this text (case-insensitive).'),
});

export const createPolicyContract = z.object({
  conditions: z
    .array(condition)
    .superRefine((list, ctx) => refuseFirst(ctx, validateConditions(list)))
    .describe('At least one; all must match.'),
  group_by: z
    .array(groupByKey)
    .superRefine((list, ctx) => refuseFirst(ctx, validateGroupBy(list)))
    .describe('At least one key.'),
  type: oneOf(POLICY_TYPES).describe('What is counted: `cost` or `tokens`.'),
  credit_limit: z.number().describe('The budget per value key and period (≥ 0).'),
  name: z.string().nullish().describe(`Display name (default: "${DEFAULT_POLICY_NAME}").`),
  alert_threshold: z.number().nullish().describe('Alert at this usage (≥ 0, below creditLimit).'),
  periodic_reset: oneOf(PERIODIC_RESETS).nullish().describe('When usage resets (`monthly` or `weekly`); omitted or null: never.'),
  workspace_id: workspaceId.nullish().describe('Workspace (UUID or slug); default: the caller’s.'),
});

export const updatePolicyContract = z.object({
  name: z.string().optional().describe('Display name.'),
  credit_limit: z.number().optional().describe('The budget per value key and period (≥ 0).'),
  alert_threshold: z.number().nullish().describe('Alert at this usage (below creditLimit); null removes it.'),
  periodic_reset: oneOf(PERIODIC_RESETS).nullish().describe('When usage resets (`monthly` or `weekly`); null: never.'),
  reset_usage_for_value: z
    .string()
    .superRefine((value, ctx) => {
      if (!value) refuseWhole(ctx, 'invalid_value', "'reset_usage_for_value' must be a non-empty value key (e.g. 'api_key:<id>').");
    })
    .optional()
    .describe("Zero this value key's usage for the current period and clear its alert flags."),
});

export type CreatePolicyInput = z.output<typeof createPolicyContract>;
export type UpdatePolicyInput = z.output<typeof updatePolicyContract>;
