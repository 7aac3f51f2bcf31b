import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const OrganisationSchema = defineEntity({
  name: 'Organisation',
  tableName: 'organisations',
  properties: (p) => ({
    id: p.uuid().primary(),
    name: p.string(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});

export type Organisation = InferEntity<typeof OrganisationSchema>;
