import { describe, expect, it } from 'vitest';
import { parseContract } from '../../../src/lib/contract.js';
import { createGuardrailContract } from '../../../src/modules/guardrails/guardrails.contract.js';
import { normalizeActions, validateChecks } from '../../../src/modules/guardrails/validate.js';

const jwtParams = { jwksUri: 'https://issuer.example/.well-known/jwks.json', headerKey: 'Authorization' };

describe('validateChecks', () => {
  it('normalises entries: is_enabled defaults to true, parameter defaults applied, unknown keys dropped', () => {
    const result = validateChecks([
      { id: 'default.jwt', name: 'JWT', parameters: { ...jwtParams, extra: 1 } },
      { id: 'default.wordCount', is_enabled: false, parameters: { maxWords: 10 } },
      { id: 'default.alluppercase' },
    ]);
    expect(result).toEqual({
      ok: true,
      checks: [
        {
          id: 'default.jwt',
          name: 'JWT',
          is_enabled: true,
          parameters: { ...jwtParams, cacheMaxAge: 86400, clockTolerance: 5, maxTokenAge: '1d', algorithms: ['RS256'] },
        },
        { id: 'default.wordCount', is_enabled: false, parameters: { minWords: 0, maxWords: 10, not: false } },
        { id: 'default.alluppercase', is_enabled: true, parameters: { not: false } },
      ],
    });
  });

  // Types (entries are objects, id a string, …) are the contract's: these are the rules over values.
  it.each([
    [[], 'checks', [], 'Invalid checks: must contain at least one check.'],
    [
      [{ id: 'default.alluppercase' }, { id: 'default.nope' }],
      'checks[1].id',
      [1, 'id'],
      expect.stringMatching(/^Invalid checks\[1\]\.id: unknown check "default\.nope"\. Known checks: default\.jwt, /),
    ],
  ])('rejects %j at %s', (checks, param, at, message) => {
    expect(validateChecks(checks)).toEqual({ ok: false, param, at, message });
  });

  it.each([
    [{ headerKey: 'Authorization' }, 'checks[0].parameters.jwksUri', 'Invalid checks[0].parameters.jwksUri: is required.'],
    [{ ...jwtParams, jwksUri: 'not a url' }, 'checks[0].parameters.jwksUri', 'Invalid checks[0].parameters.jwksUri: must be an absolute http or https URL.'],
    [{ ...jwtParams, jwksUri: 'file:///etc/passwd' }, 'checks[0].parameters.jwksUri', 'Invalid checks[0].parameters.jwksUri: must be an absolute http or https URL.'],
    [{ ...jwtParams, headerKey: 'bad header' }, 'checks[0].parameters.headerKey', 'Invalid checks[0].parameters.headerKey: must be an HTTP header name.'],
    [{ ...jwtParams, cacheMaxAge: '60' }, 'checks[0].parameters.cacheMaxAge', 'Invalid checks[0].parameters.cacheMaxAge: must be a number (got string).'],
    [{ ...jwtParams, clockTolerance: 1.5 }, 'checks[0].parameters.clockTolerance', 'Invalid checks[0].parameters.clockTolerance: must be an integer (got float).'],
    [{ ...jwtParams, maxTokenAge: '1 week' }, 'checks[0].parameters.maxTokenAge', 'Invalid checks[0].parameters.maxTokenAge: must be a duration such as 30s, 15m, 2h or 1d.'],
    [{ ...jwtParams, algorithms: ['RS256', 'none'] }, 'checks[0].parameters.algorithms[1]', expect.stringMatching(/^Invalid checks\[0\]\.parameters\.algorithms\[1\]: must be one of RS256, /)],
    [{ ...jwtParams, algorithms: ['HS256'] }, 'checks[0].parameters.algorithms[0]', expect.stringContaining('must be one of')],
    [{ ...jwtParams, cacheMaxAge: 0 }, 'checks[0].parameters.cacheMaxAge', 'Invalid checks[0].parameters.cacheMaxAge: must be greater than or equal to 1.'],
    [{ ...jwtParams, algorithms: [] }, 'checks[0].parameters.algorithms', 'Invalid checks[0].parameters.algorithms: must list at least one algorithm.'],
  ])('default.jwt parameters %j → %s', (parameters, param, message) => {
    expect(validateChecks([{ id: 'default.jwt', parameters }])).toMatchObject({ ok: false, param, message });
  });

  it('rejects a regex that does not compile', () => {
    expect(validateChecks([{ id: 'default.alluppercase' }, { id: 'default.regexMatch', parameters: { rule: 'a(b' } }])).toEqual({
      ok: false,
      param: 'checks[1].parameters.rule',
      at: [1, 'parameters', 'rule'],
      message: 'Invalid checks[1].parameters.rule: is not a valid regular expression: Invalid regular expression: /a(b/: Unterminated group.',
    });
    expect(validateChecks([{ id: 'default.regexMatch', parameters: {} }])).toMatchObject({ param: 'checks[0].parameters.rule', message: 'Invalid checks[0].parameters.rule: is required.' });
  });

  it('rejects an invalid JSON schema', () => {
    const bad = validateChecks([{ id: 'default.jsonSchema', parameters: { schema: { type: 'strin' } } }]);
    expect(bad).toMatchObject({ ok: false, param: 'checks[0].parameters.schema' });
    expect(bad.ok === false && bad.message).toMatch(/^Invalid checks\[0\]\.parameters\.schema: is not a valid JSON schema: schema is invalid: data\/type must be equal to one of the allowed values/);
    expect(validateChecks([{ id: 'default.jsonSchema', parameters: { schema: { $ref: '#/definitions/missing' } } }])).toMatchObject({
      ok: false,
      param: 'checks[0].parameters.schema',
    });
    expect(validateChecks([{ id: 'default.jsonSchema', parameters: { schema: 'object' } }])).toMatchObject({ param: 'checks[0].parameters.schema' });
    expect(validateChecks([{ id: 'default.jsonSchema', parameters: { schema: { type: 'object', example: {} } } }])).toMatchObject({ ok: true });
  });

  it('rejects bad text-check parameters with their path', () => {
    expect(validateChecks([{ id: 'default.wordCount', parameters: { minWords: 5, maxWords: 2 } }])).toMatchObject({
      ok: false,
      param: 'checks[0].parameters.maxWords',
      message: 'Invalid checks[0].parameters.maxWords: must be greater than or equal to minWords (5).',
    });
    expect(validateChecks([{ id: 'default.contains', parameters: { words: ['a'], operator: 'some' } }])).toMatchObject({ param: 'checks[0].parameters.operator' });
    expect(validateChecks([{ id: 'default.contains', parameters: { words: [] } }])).toMatchObject({
      ok: false,
      param: 'checks[0].parameters.words',
      message: 'Invalid checks[0].parameters.words: must list at least one word or phrase.',
    });
    expect(validateChecks([{ id: 'default.jsonKeys', parameters: { keys: ['a', 2] } }])).toMatchObject({ param: 'checks[0].parameters.keys[1]' });
    expect(validateChecks([{ id: 'default.endsWith', parameters: { suffix: '' } }])).toMatchObject({ param: 'checks[0].parameters.suffix' });
    expect(validateChecks([{ id: 'default.modelWhitelist', parameters: { models: 'gpt-4o' } }])).toMatchObject({ param: 'checks[0].parameters.models' });
    expect(validateChecks([{ id: 'default.requiredMetadataKeys', parameters: { metadataKeys: ['a'], operator: 'most' } }])).toMatchObject({
      param: 'checks[0].parameters.operator',
    });
    expect(validateChecks([{ id: 'default.validUrls', parameters: { not: 'no' } }])).toMatchObject({ param: 'checks[0].parameters.not' });
  });
});

describe('normalizeActions', () => {
  const defaults = {
    deny: false,
    async: false,
    on_success: { feedback: { value: 5, weight: 1, metadata: '' } },
    on_fail: { feedback: { value: -5, weight: 1, metadata: '' } },
  };

  it('applies the documented defaults', () => {
    expect(normalizeActions()).toEqual(defaults);
    expect(normalizeActions(null)).toEqual(defaults);
    expect(normalizeActions({ deny: true, on_fail: { feedback: { value: -10 } } })).toEqual({ ...defaults, deny: true, on_fail: { feedback: { value: -10, weight: 1, metadata: '' } } });
  });

  it('the contract applies them and reports the offending field', () => {
    const parse = (actions: unknown) => parseContract(createGuardrailContract, { name: 'x', checks: [{ id: 'default.alluppercase' }], actions });
    expect(parse(undefined).actions).toEqual(defaults);
    expect(() => parse({ deny: 'yes' })).toThrow("Invalid type for 'actions.deny': expected a boolean, but got a string instead.");
    for (const [actions, param] of [
      [{ async: 1 }, 'actions.async'],
      [{ on_success: { feedback: { weight: 'heavy' } } }, 'actions.on_success.feedback.weight'],
      [{ on_fail: { feedback: { metadata: 3 } } }, 'actions.on_fail.feedback.metadata'],
      ['deny', 'actions'],
    ] as const) {
      expect(() => parse(actions)).toThrow(expect.objectContaining({ param }));
    }
  });
});
