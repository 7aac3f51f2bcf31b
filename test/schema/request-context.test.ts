/**
 * schema/context.ts: the request context's lazy fields (`caller`, `log`) are own enumerable
 * accessors, made when first read, copied by Object.assign as Yoga copies the context; their
 * getters are the same functions for every context (not an object literal's getters made per
 * request, whose accessor pair V8 keeps in the old generation, holding the request through every
 * young-generation collection).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext } from '../../schema/context.js';
import { createTestApp, TEST_KEY, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const request = (headers: Record<string, string> = {}) => new Request('http://gateway.test/v1/models', { headers: { 'x-gateway-api-key': TEST_KEY, ...headers } });

describe('the request context', () => {
  it('makes caller and log when first read, once, as own enumerable fields', async () => {
    const context = await createRequestContext(t.app.runtime, request({ 'x-gateway-virtual-key': 'upstream' }));
    expect(Object.keys(context)).toEqual(expect.arrayContaining(['caller', 'log', 'request', 'requestId', 'em']));
    expect(context.caller.virtualKey).toBe('upstream');
    expect(context.caller).toBe(context.caller);
    expect(context.log).toBe(context.log);
    const copy = Object.assign({}, context);
    expect(copy.caller).toBe(context.caller);
    expect(copy.log).toBe(context.log);
    expect(Object.getOwnPropertySymbols(copy)).toEqual([]);
  });

  it('reads each request from its own context, with getters shared by every context', async () => {
    const first = await createRequestContext(t.app.runtime, request({ 'x-gateway-virtual-key': 'first' }));
    const second = await createRequestContext(t.app.runtime, request({ 'x-gateway-virtual-key': 'second' }));
    expect([first.caller.virtualKey, second.caller.virtualKey]).toEqual(['first', 'second']);
    for (const field of ['caller', 'log']) {
      expect(Object.getOwnPropertyDescriptor(first, field)!.get).toBe(Object.getOwnPropertyDescriptor(second, field)!.get);
    }
  });
});
