import { collectionsModule } from './collections/collections.module.js';
import { enforcementModule } from './enforcement/enforcement.module.js';
import { guardrailsModule } from './guardrails/guardrails.module.js';
import { integrationsModule } from './integrations/integrations.module.js';
import type { DomainModule } from './module.js';
import { policiesModule } from './policies/policies.module.js';
import { requestLogModule } from './request-log/request-log.module.js';
import { runsModule } from './runs/runs.module.js';
import { tenancyModule } from './tenancy/tenancy.module.js';

/**
 * Every domain of the app, in dependency order (a workspace-created hook of a later module may rely
 * on rows an earlier one made). The entity list is explicit: it is the union of these.
 */
export const domainModules: DomainModule[] = [
  tenancyModule,
  integrationsModule,
  collectionsModule,
  policiesModule,
  guardrailsModule,
  // Before runs: its hooks must be in place when the runs module's start recovers runs a previous
  // process left behind (a run failed by recovery settles its usage reservations).
  enforcementModule,
  runsModule,
  requestLogModule,
];
