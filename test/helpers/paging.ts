import { errorResponse } from './errors.js';

/**
 * Bad `page_size` / `current_page` query values and the refusal each gets: every REST list pages
 * with the same rule (src/lib/paging.ts `pageOf`), so a list's test runs these rather than its
 * own copy of them.
 */
export const BAD_PAGING: Array<[string, ReturnType<typeof errorResponse>]> = [
  ['page_size=-1', errorResponse(400, "Invalid value for 'page_size': expected an integer from 0 to 1000.", 'page_size', 'invalid_value')],
  ['page_size=1001', errorResponse(400, "Invalid value for 'page_size': expected an integer from 0 to 1000.", 'page_size', 'invalid_value')],
  ['page_size=abc', errorResponse(400, "Invalid type for 'page_size': expected an integer, but got 'abc' instead.", 'page_size', 'invalid_type')],
  ['page_size=1.5', errorResponse(400, "Invalid type for 'page_size': expected an integer, but got '1.5' instead.", 'page_size', 'invalid_type')],
  ['page_size=', errorResponse(400, "Invalid type for 'page_size': expected an integer, but got '' instead.", 'page_size', 'invalid_type')],
  ['current_page=-1', errorResponse(400, "Invalid value for 'current_page': expected an integer greater than or equal to 0.", 'current_page', 'invalid_value')],
  [
    'current_page=2147483648',
    errorResponse(400, "Invalid 'current_page': integer above maximum value. Expected a value <= 2147483647, but got 2147483648 instead.", 'current_page', 'integer_above_max_value'),
  ],
  ['current_page=x', errorResponse(400, "Invalid type for 'current_page': expected an integer, but got 'x' instead.", 'current_page', 'invalid_type')],
];
