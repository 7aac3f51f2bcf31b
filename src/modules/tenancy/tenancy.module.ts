import type { DomainModule } from '../module.js';
import { ApiKeySchema } from './api-key.entity.js';
import { OrganisationSchema } from './organisation.entity.js';
import { WorkspaceSchema } from './workspace.entity.js';

export const tenancyModule: DomainModule = {
  name: 'tenancy',
  entities: [OrganisationSchema, WorkspaceSchema, ApiKeySchema],
};
