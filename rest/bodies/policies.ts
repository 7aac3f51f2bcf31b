import { pageQuery, policiesContract } from '../../schema/contracts.js';

// Wire shapes of the usage-limits policy routes (docs/contract.md#usage-limit-policies). Bodies are
// the operations' contracts (src/modules/policies/policies.contract.ts), as the resolvers parse
// them; rules over stored data (limits, workspaces) are the service's. Unknown keys are ignored.

export const createPolicyBody = policiesContract.createPolicyContract;
export const updatePolicyBody = policiesContract.updatePolicyContract;

export const listPoliciesQuery = policiesContract.listPoliciesContract.extend(pageQuery);

export const listPolicyEntitiesQuery = policiesContract.listPolicyEntitiesContract.extend(pageQuery);
