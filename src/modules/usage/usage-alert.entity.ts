import { defineEntity, type InferEntity } from '@mikro-orm/core';

/** The history of raised usage alerts (each also published live and logged once). */
export const UsageAlertSchema = defineEntity({
  name: 'UsageAlert',
  tableName: 'usage_alerts',
  properties: (p) => ({
    id: p.uuid().primary(),
    kind: p.enum(['threshold', 'exhausted'] as const),
    bucketId: p.uuid(),
    ownerType: p.string(),
    ownerId: p.string(),
    valueKey: p.text(),
    periodKey: p.string(),
    type: p.enum(['cost', 'tokens'] as const),
    /** In the limit's own unit (tokens or US dollars), as it was when the alert was raised. */
    currentUsage: p.double().$type<number>(),
    creditLimit: p.double().$type<number>(),
    alertThreshold: p.double().$type<number>().nullable(),
    workspaceId: p.uuid().nullable(),
    message: p.text(),
    createdAt: p.datetime(),
  }),
  indexes: [{ properties: ['ownerType', 'ownerId', 'createdAt'] }, { properties: ['workspaceId', 'createdAt'] }],
});

export type UsageAlertRecord = InferEntity<typeof UsageAlertSchema>;
