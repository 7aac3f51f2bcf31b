import type { DomainModule } from '../module.js';

export const collectionsModule: DomainModule = {
  name: 'collections',
  entities: [],
};
