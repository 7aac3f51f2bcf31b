import type { ApiKeyType } from '../modules/tenancy/api-key.entity.js';

/** Who is calling: resolved from the API key once per request. */
export interface Principal {
  apiKeyId: string;
  organisationId: string;
  type: ApiKeyType;
  /** The only workspace a workspace key may act in; null for organisation keys. */
  workspaceId: string | null;
}
