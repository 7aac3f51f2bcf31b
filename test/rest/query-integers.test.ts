/**
 * Integer query parameters are range-checked at the edge: a value a GraphQL Int cannot carry is a
 * 400 naming the parameter, never a GraphQL variable error without `param`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

it.each([
  ['/v1/logs?limit=2147483648', 'limit', "Invalid 'limit': integer above maximum value. Expected a value <= 2147483647, but got 2147483648 instead.", 'integer_above_max_value'],
  ['/v1/logs?status=99999999999', 'status', "Invalid 'status': integer above maximum value. Expected a value <= 2147483647, but got 99999999999 instead.", 'integer_above_max_value'],
  ['/v1/logs?limit=abc', 'limit', "Invalid type for 'limit': expected an integer, but got 'abc' instead.", 'invalid_type'],
])('%s: 400 with param', async (path, param, message, code) => {
  const r = await t.request('GET', path);
  expect(r.status).toBe(400);
  expect(r.body).toEqual({ error: { message, type: 'invalid_request_error', param, code } });
});
