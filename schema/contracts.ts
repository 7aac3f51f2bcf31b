/**
 * What the REST layer needs from src/ besides GraphQL (it never imports the domain itself): the
 * operation contracts it validates bodies with, the one formatter of their failures, the wire →
 * GraphQL key mapping, and the registered errors the edge answers before any operation runs.
 */
export { contractError, INT32_MAX, queryInteger } from '../src/lib/contract.js';
export * as runsContract from '../src/modules/runs/runs.contract.js';
export * as collectionsContract from '../src/modules/collections/collections.contract.js';
export * as promptsContract from '../src/modules/collections/prompts.contract.js';
export * as policiesContract from '../src/modules/policies/policies.contract.js';
export * as tenancyContract from '../src/modules/tenancy/tenancy.contract.js';
export * as guardrailsContract from '../src/modules/guardrails/guardrails.contract.js';
export * as providersContract from '../src/modules/integrations/providers.contract.js';
export * as integrationsContract from '../src/modules/integrations/integrations.contract.js';
export { graphqlInput } from './contract-input.js';
export { pageQuery } from '../src/lib/paging.js';
export { InternalError, MethodNotAllowedError, PayloadTooLargeError, UnsupportedMediaTypeError, invalidJson, unknownUrl, type AppError } from '../src/errors.js';
