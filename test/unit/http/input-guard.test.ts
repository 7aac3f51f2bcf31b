import { describe, expect, it } from 'vitest';
import { findInputProblem } from '../../../src/http/input-guard.js';

/* The edge's input rule on its own (src/http/input-guard.ts); the front doors are in test/rest/hardening-input.test.ts. */

describe('findInputProblem', () => {
  it('accepts ordinary JSON, other control characters and paired surrogates', () => {
    expect(findInputProblem({ a: ['x\u0001\u001f\u007f', 1, null, true, { b: '😀 \ud83d\ude00' }] }, 64)).toBeNull();
    expect(findInputProblem(undefined, 64)).toBeNull();
  });

  it('names the first offending value in document order, by its wire path', () => {
    const problem = findInputProblem({ a: 'ok', b: [{ c: 'x\u0000' }, '\u0000'], d: '\u0000' }, 64);
    expect(problem).toEqual({ param: 'b[0].c', code: 'invalid_character', message: "Invalid value for 'b[0].c': it contains the character U+0000, which text may not hold." });
  });

  it('lone surrogates, high or low, are refused and named', () => {
    expect(findInputProblem({ a: 'x\ud800' }, 64)?.message).toContain('U+D800');
    expect(findInputProblem({ a: '\udc00y' }, 64)?.message).toContain('U+DC00');
  });

  it('keys are checked too: the object holding the key is named', () => {
    expect(findInputProblem({ meta: { 'k\u0000': 1 } }, 64)).toEqual({
      param: 'meta',
      code: 'invalid_character',
      message: "Invalid parameter name in 'meta': it contains the character U+0000, which text may not hold.",
    });
    expect(findInputProblem({ 'k\u0000': 1 }, 64)?.param).toBeNull();
  });

  it('the depth limit is exact, names the top-level parameter, and the walk survives any depth', () => {
    const nest = (levels: number) => {
      let v: unknown = 1;
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    expect(findInputProblem({ a: nest(2) }, 3)).toBeNull();
    expect(findInputProblem({ a: nest(3) }, 3)).toEqual({ param: 'a', code: 'nesting_too_deep', message: "Invalid value for 'a': JSON may nest at most 3 levels of arrays and objects." });
    expect(findInputProblem(nest(4), 3)).toEqual({ param: null, code: 'nesting_too_deep', message: 'Invalid request body: JSON may nest at most 3 levels of arrays and objects.' });
    expect(findInputProblem({ a: nest(1_000_000) }, 64)?.code).toBe('nesting_too_deep');
  });

  it('non-finite numbers are refused with their place; finite ones pass', () => {
    expect(findInputProblem({ a: [1, Infinity] }, 64)).toEqual({ param: 'a[1]', code: 'invalid_number', message: "Invalid value for 'a[1]': the number is too large to be represented." });
    expect(findInputProblem({ a: -Infinity }, 64)?.code).toBe('invalid_number');
    expect(findInputProblem({ a: Number.MAX_VALUE, b: -0, c: 1e-400 }, 64)).toBeNull();
  });

  it('a starting path prefixes the names (GraphQL variables)', () => {
    expect(findInputProblem({ name: '\u0000' }, 64, ['input'])?.param).toBe('input.name');
    expect(findInputProblem('\u0000', 64, ['s'])?.param).toBe('s');
  });
});
