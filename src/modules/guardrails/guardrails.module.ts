import type { DomainModule } from '../module.js';

export const guardrailsModule: DomainModule = {
  name: 'guardrails',
  entities: [],
};
