import { defineEntity, type InferEntity } from '@mikro-orm/core';

export interface ReservationItem {
  bucketId: string;
  /** Units added to the bucket's `reserved` when the reservation was made. */
  units: number;
}

/**
 * An estimate held on buckets while a model call runs. The row makes settling and releasing happen
 * exactly once (each claims it by changing `status` from `pending`), and lets a sweep give back the
 * estimates of a process that died mid-call (`expired`; a later settle still counts the usage).
 */
export const UsageReservationSchema = defineEntity({
  name: 'UsageReservation',
  tableName: 'usage_reservations',
  properties: (p) => ({
    id: p.uuid().primary(),
    items: p.json<ReservationItem[]>(),
    status: p.enum(['pending', 'settled', 'released', 'expired'] as const),
    createdAt: p.datetime(),
    finishedAt: p.datetime().nullable(),
  }),
  indexes: [{ properties: ['status', 'createdAt'] }],
});

export type UsageReservation = InferEntity<typeof UsageReservationSchema>;
