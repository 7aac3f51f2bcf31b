import { z } from 'zod';
import { pageQuery } from '../../schema/contracts.js';

// Wire shapes of the usage-limits policy routes (docs/contract.md#usage-limit-policies). Types and enums are checked here;
// rules over values (known condition keys, limits, workspaces) are the service's, so GraphQL
// callers get the same answers. Unknown keys are ignored. Key order decides which problem is
// reported first.

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, {
    errorMap: (issue, ctx) =>
      issue.code === 'invalid_enum_value' ? { message: `must be one of ${values.map((v) => `'${v}'`).join(', ')}.` } : { message: ctx.defaultError },
  });

export const POLICY_TYPE_VALUES = ['cost', 'tokens'] as const;
export const POLICY_STATUS_VALUES = ['active', 'archived'] as const;
export const PERIODIC_RESET_VALUES = ['monthly', 'weekly'] as const;

export const createPolicyBody = z.object({
  conditions: z.array(z.object({ key: z.string(), value: z.string() })),
  group_by: z.array(z.object({ key: z.string() })),
  type: oneOf(POLICY_TYPE_VALUES),
  credit_limit: z.number(),
  name: z.string().nullish(),
  alert_threshold: z.number().nullish(),
  periodic_reset: oneOf(PERIODIC_RESET_VALUES).nullish(),
  workspace_id: z.string().nullish(),
});

export const updatePolicyBody = z.object({
  name: z.string().optional(),
  credit_limit: z.number().optional(),
  alert_threshold: z.number().nullable().optional(),
  periodic_reset: oneOf(PERIODIC_RESET_VALUES).nullable().optional(),
  reset_usage_for_value: z.string().optional(),
});

export const listPoliciesQuery = z.object({
  workspace_id: z.string().min(1, { message: 'must be a workspace id or slug.' }).optional(),
  status: oneOf(POLICY_STATUS_VALUES).optional(),
  type: oneOf(POLICY_TYPE_VALUES).optional(),
  ...pageQuery,
});
