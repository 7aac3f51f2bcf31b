// Domain modules import their contract from here; it is defined beside `Runtime` (src/runtime.ts),
// which it refers to, so that the runtime imports no module.
export type { DomainModule } from '../runtime.js';
