/**
 * The paging rules, one place for each kind of list (docs/contract.md#paging):
 * - page-numbered lists (`current_page`, `page_size`; answered as `{total, data}`), as every paged
 *   control-plane list pages: one range, one message, one query shape;
 * - cursor lists (`limit` and an `after` cursor, OpenAI style: runs' lists, the request log): one
 *   range for `limit`, one set of messages.
 */
import type { EntityManager, EntityName, FilterQuery } from '@mikro-orm/core';
import { BadRequestError, invalidType } from '../errors.js';
import { queryInteger } from './contract.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export interface PageInput {
  /** Zero-based. */
  currentPage?: number | null;
  /** 0 returns no items but the true total. */
  pageSize?: number | null;
}

/**
 * The paging parameters of a query string (text → integer): their range is `pageOf`'s, so a REST
 * list and its GraphQL field refuse the same page with the same message.
 */
export const pageQuery = { current_page: queryInteger().optional(), page_size: queryInteger().optional() };

/** A page: `total` counts every match, not just the page. */
export interface Page<T> {
  total: number;
  data: T[];
}

/** Offset and limit of a list page; a page size or number out of range is a 400 naming it. */
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

/** One page of `where`, newest first (ties by id), with the total; page size 0 only counts. */
export async function findPage<T extends object>(em: EntityManager, entity: EntityName<T>, where: FilterQuery<T>, input: PageInput): Promise<Page<T>> {
  const { offset, limit } = pageOf(input);
  if (limit === 0) return { total: await em.count(entity, where), data: [] };
  const [data, total] = await em.findAndCount(entity, where, { orderBy: { createdAt: 'desc', id: 'desc' } as never, limit, offset });
  return { total, data: data as T[] };
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** A cursor list's page size: `limit` (default 20) as given, or a 400 naming it when out of 1–100. */
export function cursorLimit(limit: number | null | undefined): number {
  const value = limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(value)) throw invalidType('limit', 'an integer', value);
  if (value < 1) {
    throw new BadRequestError(`Invalid 'limit': integer below minimum value. Expected a value >= 1, but got ${value} instead.`, { param: 'limit', code: 'integer_below_min_value' });
  }
  if (value > MAX_LIMIT) {
    throw new BadRequestError(`Invalid 'limit': integer above maximum value. Expected a value <= ${MAX_LIMIT}, but got ${value} instead.`, { param: 'limit', code: 'integer_above_max_value' });
  }
  return value;
}
