import { describe, expect, it } from 'vitest';
import {
  MODEL_PRICES,
  PriceError,
  costInPicodollars,
  costOf,
  priceOf,
  priceOverridesSchema,
  usageAmount,
} from '../../../src/modules/usage/prices.js';

const u = (prompt_tokens: number, completion_tokens: number) => ({ prompt_tokens, completion_tokens });

describe('price table', () => {
  it('lists the common OpenAI models and local at zero', () => {
    for (const model of ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-3.5-turbo', 'o3-mini']) {
      expect(MODEL_PRICES[model], model).toBeDefined();
      expect(MODEL_PRICES[model]!.output, model).toBeGreaterThan(0);
    }
    expect(MODEL_PRICES.local).toEqual({ input: 0, output: 0 });
  });

  it('charges known list prices', () => {
    expect(MODEL_PRICES['gpt-4o']).toEqual({ input: 2.5, output: 10 });
    expect(MODEL_PRICES['gpt-4o-mini']).toEqual({ input: 0.15, output: 0.6 });
  });

  it('is frozen', () => {
    expect(Object.isFrozen(MODEL_PRICES)).toBe(true);
  });
});

describe('costOf', () => {
  it('prices input and output tokens separately, per million', () => {
    expect(costOf('gpt-4o', u(1_000_000, 0))).toBe(2.5);
    expect(costOf('gpt-4o', u(0, 1_000_000))).toBe(10);
    expect(costOf('gpt-4o', u(1000, 500))).toBe(0.0075); // 0.0025 + 0.005
    expect(costOf('gpt-4.1-mini', u(2_000_000, 500_000))).toBe(1.6); // 0.8 + 0.8
  });

  it('is exact where float arithmetic is not', () => {
    // 0.1 + 0.2 style: 1M tokens each at 0.1 and 0.2 $/M
    const overrides = { m: { input: 0.1, output: 0.2 } };
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(costOf('m', u(1_000_000, 1_000_000), overrides)).toBe(0.3);
    // a single gpt-4o-mini token costs 0.15 µ$, which micro-dollar integers would round to 0
    expect(costInPicodollars('gpt-4o-mini', u(1, 0))).toBe(150_000n);
    expect(costOf('gpt-4o-mini', u(1, 1))).toBe(7.5e-7);
    expect(costOf('gpt-4o-mini', u(3, 7))).toBe(0.00000465);
  });

  it('keeps price precision down to 1e-6 $ per million tokens', () => {
    expect(costInPicodollars('m', u(1, 0), { m: { input: 0.000001, output: 0 } })).toBe(1n);
    expect(costInPicodollars('m', u(10, 1), { m: { input: 1.234567, output: 0.000003 } })).toBe(12_345_673n);
  });

  it('stays exact beyond 2^53 picodollars', () => {
    expect(costInPicodollars('gpt-4', u(0, 1_000_000_000))).toBe(60_000_000_000_000_000n); // $60,000
    expect(costOf('gpt-4', u(0, 1_000_000_000))).toBe(60_000);
  });

  it('counts local as free', () => {
    expect(costOf('local', u(123_456, 654_321))).toBe(0);
  });

  it('prices a dated snapshot like its alias unless the snapshot is listed', () => {
    expect(costOf('gpt-4o-2024-08-06', u(1_000_000, 0))).toBe(2.5);
    expect(costOf('gpt-4o-2024-05-13', u(1_000_000, 0))).toBe(5);
    expect(() => costOf('gpt-4o-latest-2024', u(1, 1))).toThrow(PriceError);
  });

  it('lets integration overrides replace or add prices', () => {
    const overrides = { 'gpt-4o': { input: 1, output: 2 }, 'my-model': { input: 3, output: 0 } };
    expect(costOf('gpt-4o', u(1_000_000, 1_000_000), overrides)).toBe(3);
    expect(costOf('gpt-4o-2024-08-06', u(1_000_000, 0), overrides)).toBe(1);
    expect(costOf('my-model', u(500_000, 9), overrides)).toBe(1.5);
    expect(costOf('gpt-4o-mini', u(1_000_000, 0), overrides)).toBe(0.15); // untouched rows still apply
  });

  it('prefers the most specific name over an override of the alias', () => {
    expect(priceOf('gpt-4o-2024-05-13', { 'gpt-4o': { input: 1, output: 1 } })).toEqual({ input: 5, output: 15 });
  });

  it('refuses an unknown model, naming it', () => {
    let error: unknown;
    try {
      costOf('gpt-9-ultra', u(10, 10));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PriceError);
    expect(error).toMatchObject({ model: 'gpt-9-ultra', reason: 'unknown_model', name: 'PriceError' });
    expect((error as Error).message).toContain("'gpt-9-ultra'");
  });

  it('refuses even zero usage of an unknown model', () => {
    expect(() => costOf('nope', u(0, 0))).toThrow(/nope/);
  });

  it('does not resolve prototype members as models', () => {
    for (const model of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(priceOf(model), model).toBeUndefined();
      expect(() => costOf(model, u(1, 1))).toThrow(PriceError);
    }
    expect(priceOf('constructor', {})).toBeUndefined();
  });

  it('rejects invalid override prices and token counts', () => {
    expect(() => costOf('m', u(1, 1), { m: { input: -1, output: 0 } })).toThrow(expect.objectContaining({ reason: 'invalid_price', model: 'm' }));
    expect(() => costOf('m', u(1, 1), { m: { input: Number.NaN, output: 0 } })).toThrow(PriceError);
    expect(() => costOf('gpt-4o', u(-1, 0))).toThrow(RangeError);
    expect(() => costOf('gpt-4o', u(1.5, 0))).toThrow(/prompt_tokens/);
    expect(() => costOf('gpt-4o', u(0, Number.POSITIVE_INFINITY))).toThrow(/completion_tokens/);
  });
});

describe('usageAmount', () => {
  it('counts total tokens for token policies, for any model', () => {
    expect(usageAmount('tokens', 'gpt-9-ultra', u(120, 30))).toBe(150);
  });

  it('counts dollars for cost policies', () => {
    expect(usageAmount('cost', 'gpt-4o', u(1000, 500))).toBe(0.0075);
    expect(() => usageAmount('cost', 'gpt-9-ultra', u(1, 1))).toThrow(PriceError);
  });
});

describe('priceOverridesSchema', () => {
  it('accepts a model → {input, output} map', () => {
    expect(priceOverridesSchema.parse({ 'my-model': { input: 1.25, output: 0 } })).toEqual({ 'my-model': { input: 1.25, output: 0 } });
  });

  it('rejects negative, missing and extra fields', () => {
    expect(priceOverridesSchema.safeParse({ m: { input: -1, output: 1 } }).success).toBe(false);
    expect(priceOverridesSchema.safeParse({ m: { input: 1 } }).success).toBe(false);
    expect(priceOverridesSchema.safeParse({ m: { input: 1, output: 1, cached: 0.5 } }).success).toBe(false);
    expect(priceOverridesSchema.safeParse({ m: { input: Number.POSITIVE_INFINITY, output: 1 } }).success).toBe(false);
  });
});
