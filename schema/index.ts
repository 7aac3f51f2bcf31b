import { builder } from './builder.js';
import './tenancy.js';
import './integrations.js';
import './collections.js';
import './policies.js';
import './guardrails.js';
import './runs.js';
import './enforcement.js';
import './chat.js';
import './request-log.js';

/** The whole schema: every domain file registers its types on the builder when imported above. */
export const schema = builder.toSchema({ sortSchema: true });
export type { RequestContext, Runtime } from './context.js';
export { createRequestContext } from './context.js';
export { maskError, extensionsOf, type ErrorExtensions } from './errors.js';
export { maskingPlugin } from './masking-plugin.js';
export { documentErrorsPlugin } from './document-errors-plugin.js';
export { inputGuardPlugin } from './input-guard-plugin.js';
