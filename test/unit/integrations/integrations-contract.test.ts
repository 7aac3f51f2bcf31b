import { describe, expect, it } from 'vitest';
import { parseContract } from '../../../src/lib/contract.js';
import { BadRequestError } from '../../../src/errors.js';
import {
  createIntegrationContract,
  deleteIntegrationModelsQuery,
  updateIntegrationContract,
  updateIntegrationModelsContract,
  updateIntegrationWorkspacesContract,
} from '../../../src/modules/integrations/integrations.contract.js';

/** The refusal a contract gives, as the envelope fields a caller sees. */
function refusal(contract: Parameters<typeof parseContract>[0], input: unknown): { message: string; param: string | null; code: string | null } {
  try {
    parseContract(contract, input);
  } catch (error) {
    if (error instanceof BadRequestError) return { message: error.message, param: error.param, code: error.code };
    throw error;
  }
  throw new Error('expected a refusal');
}

const create = (extra: Record<string, unknown>) => ({ name: 'x', ai_provider_id: 'openai', ...extra });

describe('createIntegrationContract', () => {
  it('reads configurations in both spellings (camelCase inside configurations: the SDK leaves nested keys alone)', () => {
    expect(parseContract(createIntegrationContract, create({ configurations: { baseUrl: 'https://a.example/v1/', defaultModel: ' m ', openaiOrganization: 'org-9' } })).configurations).toEqual({
      base_url: 'https://a.example/v1',
      default_model: 'm',
      openai_organization: 'org-9',
    });
    expect(parseContract(createIntegrationContract, create({ configurations: { custom_host: 'http://h:1/v1' } })).configurations).toEqual({ custom_host: 'http://h:1/v1' });
    // A camelCase key of another type is not taken for its snake_case one: ignored, as any unknown key.
    expect(parseContract(createIntegrationContract, create({ configurations: { baseUrl: 5 } })).configurations).toEqual({});
  });

  it.each([
    [{ slug: 'has space' }, "'slug' must be 1–64 letters, digits, '-' or '_' (and not a UUID).", 'slug', 'invalid_value'],
    [{ key: '' }, "'key' must be a non-empty string of at most 8192 characters.", 'key', 'invalid_value'],
    [{ description: 'd'.repeat(2001) }, "'description' must be at most 2000 characters.", 'description', 'invalid_value'],
    [{ ai_provider_id: 'anthropic' }, "Invalid value for 'ai_provider_id': expected one of 'local', 'openai'.", 'ai_provider_id', 'invalid_value'],
    [{ configurations: { base_url: 'ftp://x' } }, "Invalid value for 'configurations.base_url': expected an http:// or https:// URL.", 'configurations.base_url', 'invalid_value'],
    [
      { configurations: { custom_host: 'https://user:pw@x/v1' } },
      "Invalid value for 'configurations.custom_host': a URL must not contain credentials; send the secret as 'key'.",
      'configurations.custom_host',
      'invalid_value',
    ],
    [
      { configurations: { custom_host: 'http://a/v1', base_url: 'http://b/v1' } },
      "Send 'configurations.custom_host' or 'configurations.base_url' (one setting, two names), not both.",
      'configurations.base_url',
      'invalid_value',
    ],
    [
      { configurations: { default_model: ' ' } },
      "Invalid value for 'configurations.default_model': expected a non-empty string of at most 256 characters.",
      'configurations.default_model',
      'invalid_value',
    ],
    [
      { configurations: { openai_organization: 'org 1\r\nx-evil: 1' } },
      "Invalid value for 'configurations.openai_organization': expected an OpenAI organization id (1–256 visible ASCII characters, no spaces).",
      'configurations.openai_organization',
      'invalid_value',
    ],
    [
      { configurations: { prices: { 'gpt-x': { input: -1, output: 1 } } } },
      "Invalid value for 'configurations.prices.gpt-x.input': expected a price ≥ 0 in US dollars per million tokens.",
      'configurations.prices.gpt-x.input',
      'invalid_value',
    ],
    [{ configurations: { prices: { 'gpt-x': { input: 1, output: 1, cached: 1 } } } }, 'Unrecognized request argument supplied: cached', 'configurations.prices.gpt-x.cached', 'unknown_parameter'],
  ])('refuses %j', (extra, message, param, code) => {
    expect(refusal(createIntegrationContract, create(extra))).toEqual({ message, param, code });
  });

  it('an update may clear the key and the description', () => {
    expect(parseContract(updateIntegrationContract, { key: null, description: null })).toEqual({ key: null, description: null });
  });
});

describe('updateIntegrationWorkspacesContract', () => {
  const item = (extra: Record<string, unknown>) => ({ workspaces: [{ id: 'default', enabled: true, ...extra }] });
  it.each([
    [item({ rate_limits: [{}, {}] }), "Invalid value for 'workspaces[0].rate_limits': at most one rate limit is allowed, got 2.", 'workspaces[0].rate_limits', 'invalid_value'],
    [item({ usage_limits: [{}] }), "Missing required parameter: 'workspaces[0].usage_limits[0].credit_limit'.", 'workspaces[0].usage_limits[0].credit_limit', 'missing_required_parameter'],
    [
      item({ usage_limits: [{ credit_limit: 10, alert_threshold: 10 }] }),
      "Invalid value for 'workspaces[0].usage_limits[0].alert_threshold': alert_threshold must be less than credit_limit.",
      'workspaces[0].usage_limits[0].alert_threshold',
      'invalid_value',
    ],
    [
      item({ usage_limits: [{ credit_limit: 1, periodic_reset: 'daily' }] }),
      "Invalid value for 'workspaces[0].usage_limits[0].periodic_reset': expected one of 'monthly', 'weekly'.",
      'workspaces[0].usage_limits[0].periodic_reset',
      'invalid_value',
    ],
    [
      item({ rate_limits: [{ unit: 'rpm', value: 0 }] }),
      "Invalid value for 'workspaces[0].rate_limits[0].value': expected an integer from 1 to 1000000000.",
      'workspaces[0].rate_limits[0].value',
      'invalid_value',
    ],
    [{ global_workspace_access: {} }, "Missing required parameter: 'global_workspace_access.enabled'.", 'global_workspace_access.enabled', 'missing_required_parameter'],
  ])('refuses %j', (input, message, param, code) => {
    expect(refusal(updateIntegrationWorkspacesContract, input)).toEqual({ message, param, code });
  });
});

describe('updateIntegrationModelsContract', () => {
  const priced = (request: number, response: number) => ({ type: 'static', pay_as_you_go: { request_token: { price: request }, response_token: { price: response } } });
  it('reads models with their price', () => {
    expect(parseContract(updateIntegrationModelsContract, { models: [{ slug: 'm', enabled: true, is_custom: true, pricing_config: priced(0.001, 0.002) }], allow_all_models: false })).toEqual({
      models: [{ slug: 'm', enabled: true, is_custom: true, pricing_config: priced(0.001, 0.002) }],
      allow_all_models: false,
    });
  });

  it.each([
    [{}, "Missing required parameter: 'models'.", 'models', 'missing_required_parameter'],
    [{ models: [{ slug: 'm' }] }, "Missing required parameter: 'models[0].enabled'.", 'models[0].enabled', 'missing_required_parameter'],
    [{ models: [{ slug: ' ', enabled: true }] }, "Invalid value for 'models[0].slug': expected a non-empty string of at most 256 characters.", 'models[0].slug', 'invalid_value'],
    [
      { models: [{ slug: 'm', enabled: true, pricing_config: priced(-1, 0) }] },
      "Invalid value for 'models[0].pricing_config.pay_as_you_go.request_token.price': expected a price ≥ 0 (US cents per token).",
      'models[0].pricing_config.pay_as_you_go.request_token.price',
      'invalid_value',
    ],
    [
      { models: [{ slug: 'm', enabled: true, pricing_config: { pay_as_you_go: { request_token: { price: 1 } } } }] },
      "Missing required parameter: 'models[0].pricing_config.pay_as_you_go.response_token'.",
      'models[0].pricing_config.pay_as_you_go.response_token',
      'missing_required_parameter',
    ],
    [
      { models: [{ slug: 'm', enabled: true, configurations: { custom_host: 'http://x' } }] },
      "Invalid value for 'models[0].configurations': per-model configurations are not supported: set the integration's configurations.custom_host.",
      'models[0].configurations',
      'invalid_value',
    ],
  ])('refuses %j', (input, message, param, code) => {
    expect(refusal(updateIntegrationModelsContract, input)).toEqual({ message, param, code });
  });

  it('reads the slugs to delete from a comma-separated list', () => {
    expect(parseContract(deleteIntegrationModelsQuery, { slugs: 'a, b,,a' })).toEqual({ slugs: ['a', 'b'] });
    expect(refusal(deleteIntegrationModelsQuery, { slugs: ' , ' })).toEqual({ message: "Invalid value for 'slugs': expected a comma-separated list of model slugs.", param: 'slugs', code: 'invalid_value' });
  });
});
