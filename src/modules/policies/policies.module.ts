import type { DomainModule } from '../module.js';

export const policiesModule: DomainModule = {
  name: 'policies',
  entities: [],
};
