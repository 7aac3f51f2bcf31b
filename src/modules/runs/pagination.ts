/**
 * OpenAI-style cursor lists: `limit` (1–100, default 20: `cursorLimit` of src/lib/paging.ts),
 * `order` (`asc`/`desc` by creation, default `desc`), `after`/`before` (an object id of the same
 * list), answered as `{object: "list", data, first_id, last_id, has_more}`.
 */
import type { EntityManager, EntityName, FilterQuery } from '@mikro-orm/core';
import { BadRequestError, unsupportedValue } from '../../errors.js';
import { cursorLimit } from '../../lib/paging.js';
import type { ListObject } from './wire.js';

export interface PageArgs {
  limit?: number | null;
  order?: string | null;
  after?: string | null;
  before?: string | null;
}

interface Normalised {
  limit: number;
  order: 'asc' | 'desc';
  after: string | null;
  before: string | null;
}

export function normalisePage(args: PageArgs): Normalised {
  const limit = cursorLimit(args.limit);
  const order = args.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') {
    throw unsupportedValue('order', order, ['asc', 'desc']);
  }
  return { limit, order, after: args.after ?? null, before: args.before ?? null };
}

type Ordered = { id: string; ordinal: number };

async function cursorOrdinal<T extends object>(em: EntityManager, entity: EntityName<T>, where: FilterQuery<T>, id: string, param: string): Promise<number> {
  const row = await em.findOne(entity, { $and: [where, { id }] } as unknown as FilterQuery<T>, { fields: ['ordinal'] as never });
  if (!row) throw new BadRequestError(`Invalid '${param}': no object with id '${id}' in this list.`, { param, code: 'invalid_value' });
  return (row as unknown as Ordered).ordinal;
}

/** One page of `entity` rows matching `where`, mapped to wire objects. */
export async function pageOf<T extends object, W extends { id: string }>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  args: PageArgs,
  map: (row: T) => W,
): Promise<ListObject<W>> {
  const page = normalisePage(args);
  const conditions: FilterQuery<T>[] = [where];
  if (page.after) {
    const at = await cursorOrdinal(em, entity, where, page.after, 'after');
    conditions.push({ ordinal: page.order === 'desc' ? { $lt: at } : { $gt: at } } as unknown as FilterQuery<T>);
  }
  if (page.before) {
    const at = await cursorOrdinal(em, entity, where, page.before, 'before');
    conditions.push({ ordinal: page.order === 'desc' ? { $gt: at } : { $lt: at } } as unknown as FilterQuery<T>);
  }
  // `before` alone reads backwards from the cursor, so the page is the one right before it.
  const backwards = page.before !== null && page.after === null;
  const direction = (page.order === 'desc') !== backwards ? 'desc' : 'asc';
  const rows = await em.find(entity, { $and: conditions } as FilterQuery<T>, { orderBy: { ordinal: direction } as never, limit: page.limit + 1 });
  const hasMore = rows.length > page.limit;
  const kept = rows.slice(0, page.limit);
  if (backwards) kept.reverse();
  return listOf(kept.map(map), hasMore);
}

/**
 * The same page for many parents at once (nested GraphQL lists): one query for all parents,
 * grouped and cut per parent in memory.
 */
export async function pagesOf<T extends object, W extends { id: string }>(
  em: EntityManager,
  entity: EntityName<T>,
  parentKey: keyof T & string,
  parentIds: readonly string[],
  extra: FilterQuery<T>,
  args: PageArgs,
  map: (row: T) => W,
): Promise<ListObject<W>[]> {
  const page = normalisePage(args);
  const where = { $and: [extra, { [parentKey]: { $in: [...parentIds] } }] } as FilterQuery<T>;
  const conditions: FilterQuery<T>[] = [where];
  if (page.after) conditions.push({ ordinal: { [page.order === 'desc' ? '$lt' : '$gt']: await cursorOrdinal(em, entity, where, page.after, 'after') } } as FilterQuery<T>);
  if (page.before) conditions.push({ ordinal: { [page.order === 'desc' ? '$gt' : '$lt']: await cursorOrdinal(em, entity, where, page.before, 'before') } } as FilterQuery<T>);
  const rows = await em.find(entity, { $and: conditions } as FilterQuery<T>, { orderBy: { ordinal: page.order } as never });
  const groups = new Map<string, T[]>(parentIds.map((id) => [id, []]));
  for (const row of rows) groups.get(String(row[parentKey]))?.push(row);
  return parentIds.map((id) => {
    const group = groups.get(id) ?? [];
    return listOf(group.slice(0, page.limit).map(map), group.length > page.limit);
  });
}

export function listOf<W extends { id: string }>(data: W[], hasMore: boolean): ListObject<W> {
  return {
    object: 'list',
    data,
    first_id: data.length > 0 ? data[0].id : null,
    last_id: data.length > 0 ? data[data.length - 1].id : null,
    has_more: hasMore,
  };
}
