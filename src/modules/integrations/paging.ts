import { BadRequestError } from '../../errors.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export interface PageInput {
  /** Zero-based. */
  currentPage?: number | null;
  /** 0 returns no items but the true total. */
  pageSize?: number | null;
}

/** Offset and limit of a list page, as every paged list pages (docs/contract.md#paging). */
export function pageOf(input: PageInput): { offset: number; limit: number } {
  const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
  const currentPage = input.currentPage ?? 0;
  if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > MAX_PAGE_SIZE) {
    throw new BadRequestError(`Invalid value for 'page_size': expected an integer from 0 to ${MAX_PAGE_SIZE}.`, { param: 'page_size', code: 'invalid_value' });
  }
  if (!Number.isInteger(currentPage) || currentPage < 0) {
    throw new BadRequestError("Invalid value for 'current_page': expected an integer greater than or equal to 0.", { param: 'current_page', code: 'invalid_value' });
  }
  return { offset: currentPage * pageSize, limit: pageSize };
}
