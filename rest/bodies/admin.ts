import { tenancyContract } from '../../schema/contracts.js';

// Wire shapes of the administration routes (docs/contract.md#administration): the operations'
// contracts (src/modules/tenancy/tenancy.contract.ts), as the resolvers parse them.

export const createWorkspaceBody = tenancyContract.createWorkspaceContract;
export const createApiKeyBody = tenancyContract.createApiKeyContract;
