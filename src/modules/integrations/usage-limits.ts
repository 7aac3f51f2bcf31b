// Workspace-access usage limits run on the shared usage accounting engine (src/modules/usage): this
// domain only stores each access's limit and turns it into the engine's LimitSpec.
import type { LimitSpec } from '../usage/usage-engine.js';
import type { ResolvedProvider } from './provider-resolution.js';

export const WORKSPACE_ACCESS_OWNER = 'workspace_access' as const;

/** The bucket value key of a workspace's usage of one access (one bucket per access and period). */
export const workspaceValueKey = (workspaceId: string): string => `workspace:${workspaceId}`;

/**
 * The usage limit of the resolved provider's workspace access, for `usageEngine(runtime).reserve`
 * / `settle` / `record`; null when the access has none. Buckets are keyed by the access id, so two
 * providers of one workspace and integration share the budget.
 */
export function workspaceAccessLimitSpec(resolved: ResolvedProvider): LimitSpec | null {
  const limit = resolved.access.usageLimit;
  if (!limit) return null;
  const workspaceId = resolved.provider.workspaceId;
  return {
    ownerType: WORKSPACE_ACCESS_OWNER,
    ownerId: resolved.access.id,
    valueKey: workspaceValueKey(workspaceId),
    type: limit.type,
    creditLimit: limit.creditLimit,
    alertThreshold: limit.alertThreshold,
    periodicReset: limit.periodicReset,
    workspaceId,
    label: `the workspace's access to integration '${resolved.integration.slug}'`,
  };
}
