import { describe, expect, it } from 'vitest';
import { matches, requestValue, validateConditions, validateGroupBy, valueKey } from '../../../src/modules/usage/conditions.js';
import type { UsageRequest } from '../../../src/modules/usage/conditions.js';

const req = (over: Partial<UsageRequest> = {}): UsageRequest => ({
  workspaceId: 'ws-1',
  apiKeyId: 'key-1',
  virtualKey: 'openai-prod',
  model: 'gpt-4o',
  metadata: { user: 'alice', team: 'ml' },
  ...over,
});

describe('validateConditions', () => {
  it('accepts every allowed key', () => {
    expect(
      validateConditions([
        { key: 'workspace_id', value: 'ws-1' },
        { key: 'api_key', value: '*' },
        { key: 'virtual_key', value: 'openai-prod' },
        { key: 'model', value: 'gpt-4o' },
        { key: 'metadata.user', value: 'alice' },
        { key: 'metadata.team', value: '*' },
      ]),
    ).toEqual([]);
  });

  it('names the offending item by wire path', () => {
    expect(validateConditions([{ key: 'model', value: 'x' }, { key: 'provider', value: 'openai' }])).toEqual([
      {
        param: 'conditions[1].key',
        at: [1, 'key'],
        message: "Unsupported key 'provider'. Allowed keys: workspace_id, api_key, virtual_key, model, metadata.<name>.",
      },
    ]);
  });

  // Types (an array of {key, value} strings) are the contract's: these are the rules over values.
  it('reports every problem in input order', () => {
    const issues = validateConditions([
      { key: 'metadata.', value: 'a' },
      { key: 'model', value: '' },
      { key: 'model', value: 'b' },
    ]);
    expect(issues.map((i) => i.param)).toEqual([
      'conditions[0].key',
      'conditions[1].value',
      'conditions[2].key', // duplicate of conditions[1]
    ]);
    expect(issues.map((i) => i.at)).toEqual([
      [0, 'key'],
      [1, 'value'],
      [2, 'key'],
    ]);
    expect(issues[0]!.message).toBe("'metadata.' needs a metadata name after 'metadata.'.");
    expect(issues[1]!.message).toBe("conditions[1].value must be a non-empty string (use '*' for any value).");
    expect(issues[2]!.message).toBe("Duplicate key 'model' in conditions.");
  });

  it('requires a non-empty array', () => {
    expect(validateConditions([])).toEqual([{ param: 'conditions', at: [], message: 'conditions must have at least one item.' }]);
  });

  it('bounds metadata names like run metadata keys (64 characters)', () => {
    expect(validateConditions([{ key: `metadata.${'a'.repeat(64)}`, value: 'x' }])).toEqual([]);
    expect(validateConditions([{ key: `metadata.${'a'.repeat(65)}`, value: 'x' }])[0]!.param).toBe('conditions[0].key');
  });

  it('is case-sensitive about keys', () => {
    expect(validateConditions([{ key: 'Model', value: 'x' }])).toHaveLength(1);
  });

  it('takes another param prefix', () => {
    expect(validateConditions([{ key: 'nope', value: 'x' }], 'usage_limits[0].conditions')[0]!.param).toBe('usage_limits[0].conditions[0].key');
  });
});

describe('validateGroupBy', () => {
  it('accepts allowed keys', () => {
    expect(validateGroupBy([{ key: 'api_key' }, { key: 'metadata.user' }])).toEqual([]);
  });

  it('rejects unknown and duplicate keys, and an empty list', () => {
    expect(validateGroupBy([{ key: 'api_key' }, { key: 'user' }, { key: 'api_key' }])).toEqual([
      { param: 'group_by[1].key', at: [1, 'key'], message: "Unsupported key 'user'. Allowed keys: workspace_id, api_key, virtual_key, model, metadata.<name>." },
      { param: 'group_by[2].key', at: [2, 'key'], message: "Duplicate key 'api_key' in group_by." },
    ]);
    expect(validateGroupBy([])).toEqual([{ param: 'group_by', at: [], message: 'group_by must have at least one item.' }]);
  });
});

describe('matches', () => {
  it('requires every condition to match', () => {
    const conds = [
      { key: 'workspace_id', value: 'ws-1' },
      { key: 'model', value: 'gpt-4o' },
    ];
    expect(matches(conds, req())).toBe(true);
    expect(matches(conds, req({ model: 'gpt-4o-mini' }))).toBe(false);
    expect(matches(conds, req({ workspaceId: 'ws-2' }))).toBe(false);
  });

  it('compares each key against its own request field', () => {
    expect(matches([{ key: 'api_key', value: 'key-1' }], req())).toBe(true);
    expect(matches([{ key: 'api_key', value: 'ws-1' }], req())).toBe(false);
    expect(matches([{ key: 'virtual_key', value: 'openai-prod' }], req())).toBe(true);
    expect(matches([{ key: 'virtual_key', value: 'key-1' }], req())).toBe(false);
  });

  it('compares exactly and case-sensitively', () => {
    expect(matches([{ key: 'model', value: 'GPT-4o' }], req())).toBe(false);
    expect(matches([{ key: 'model', value: 'gpt-4' }], req())).toBe(false);
  });

  it('matches metadata values, and an absent metadata key only with *', () => {
    expect(matches([{ key: 'metadata.user', value: 'alice' }], req())).toBe(true);
    expect(matches([{ key: 'metadata.user', value: 'bob' }], req())).toBe(false);
    expect(matches([{ key: 'metadata.region', value: 'eu' }], req())).toBe(false);
    expect(matches([{ key: 'metadata.region', value: '*' }], req())).toBe(true);
    expect(matches([{ key: 'metadata.user', value: 'alice' }], req({ metadata: { user: '' } }))).toBe(false);
  });

  it('treats * as no constraint on built-in keys', () => {
    expect(matches([{ key: 'api_key', value: '*' }, { key: 'model', value: '*' }], req({ model: 'anything' }))).toBe(true);
  });

  it('does not read inherited properties as metadata', () => {
    expect(matches([{ key: 'metadata.constructor', value: 'function Object() { [native code] }' }], req())).toBe(false);
    expect(requestValue('metadata.toString', req())).toBeUndefined();
    expect(requestValue('metadata.user', req())).toBe('alice');
    expect(requestValue('provider', req())).toBeUndefined();
  });

  it('fails closed on a key validation would have refused', () => {
    expect(matches([{ key: 'provider', value: '*' }], req())).toBe(false);
  });
});

describe('valueKey', () => {
  it('joins key:value pairs in group_by order', () => {
    expect(valueKey([{ key: 'api_key' }], req())).toBe('api_key:key-1');
    expect(valueKey([{ key: 'metadata.user' }, { key: 'api_key' }], req())).toBe('metadata.user:alice|api_key:key-1');
    expect(valueKey([{ key: 'api_key' }, { key: 'metadata.user' }], req())).toBe('api_key:key-1|metadata.user:alice');
    expect(valueKey([{ key: 'workspace_id' }, { key: 'virtual_key' }, { key: 'model' }], req())).toBe(
      'workspace_id:ws-1|virtual_key:openai-prod|model:gpt-4o',
    );
  });

  it('gives requests lacking a grouped value one shared, empty-valued bucket', () => {
    expect(valueKey([{ key: 'metadata.region' }], req())).toBe('metadata.region:');
    expect(valueKey([{ key: 'metadata.user' }], req({ metadata: { user: '' } }))).toBe('metadata.user:');
  });

  it('cannot be forged by separators inside values', () => {
    const crafted = valueKey([{ key: 'metadata.a' }], req({ metadata: { a: 'x|metadata.b:y' } }));
    const genuine = valueKey([{ key: 'metadata.a' }, { key: 'metadata.b' }], req({ metadata: { a: 'x', b: 'y' } }));
    expect(genuine).toBe('metadata.a:x|metadata.b:y');
    expect(crafted).toBe('metadata.a:x%7Cmetadata.b%3Ay');
    expect(crafted).not.toBe(genuine);
    // escaping '%' keeps an already-escaped-looking value distinct from the escaped separator
    expect(valueKey([{ key: 'metadata.a' }], req({ metadata: { a: '%7C' } }))).toBe('metadata.a:%257C');
    expect(valueKey([{ key: 'metadata.a' }], req({ metadata: { a: '|' } }))).toBe('metadata.a:%7C');
  });

  it('escapes separators in metadata names too', () => {
    expect(valueKey([{ key: 'metadata.a:b' }], req({ metadata: { 'a:b': 'v' } }))).toBe('metadata.a%3Ab:v');
  });
});
