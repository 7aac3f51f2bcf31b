import type { DomainModule } from '../module.js';

export const runsModule: DomainModule = {
  name: 'runs',
  entities: [],
};
