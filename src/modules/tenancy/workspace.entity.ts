import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const WorkspaceSchema = defineEntity({
  name: 'Workspace',
  tableName: 'workspaces',
  properties: (p) => ({
    id: p.uuid().primary(),
    organisationId: p.uuid().index(),
    slug: p.string(),
    name: p.string(),
    description: p.text().nullable(),
    isDefault: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
  uniques: [{ properties: ['organisationId', 'slug'] }],
});

export type Workspace = InferEntity<typeof WorkspaceSchema>;
