import type { DomainModule } from '../module.js';

export const integrationsModule: DomainModule = {
  name: 'integrations',
  entities: [],
};
