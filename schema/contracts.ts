/**
 * What the REST layer needs of the operation contracts (it never imports src/ itself): the
 * schemas it validates bodies with, the one formatter of their failures, and the wire → GraphQL
 * key mapping.
 */
export { contractError, INT32_MAX, queryInteger } from '../src/lib/contract.js';
export * as runsContract from '../src/modules/runs/runs.contract.js';
export { graphqlInput } from './contract-input.js';
