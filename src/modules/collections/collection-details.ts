import type { EntityManager } from '@mikro-orm/core';
import { dialectOf, executeSql } from '../../db/sql.js';
import { inChunks, placeholders } from './collection-loaders.js';

/**
 * A collection's details: the count and latest change (`last_updated_at`) of its direct
 * non-archived child collections, and the same of its non-archived prompts. They are stored on the
 * collection (four columns), so reading a level of thousands of children costs no lookup per child,
 * and every write that can change them goes through `changingDetails`, in its own transaction:
 * a child collection created, renamed, moved or archived; a prompt created, changed, moved or
 * archived. This is the one rule for them.
 */
const STORED_FROM_LIVE_DATA = `
  child_collections_count = (select count(*) from collections k where k.parent_id = c.id and k.status = 'active'),
  child_collections_last_updated_at = (select max(k.last_updated_at) from collections k where k.parent_id = c.id and k.status = 'active'),
  prompts_count = (select count(*) from prompts p where p.collection_id = c.id and p.status = 'active'),
  prompts_last_updated_at = (select max(p.last_updated_at) from prompts p where p.collection_id = c.id and p.status = 'active')`;

/**
 * Runs `write` (which changes what the details of the collections `ids` count), then stores those
 * details again from live data; `em` must be the write's transaction. They are computed again, not
 * moved by one: a latest change cannot be taken back by subtraction, and a count computed is right
 * whatever the write did. On PostgreSQL the collections are locked first (in id order, so two
 * writers never wait for each other in a circle): two writers under one parent then store their
 * details one after the other, the second seeing the first's committed rows (READ COMMITTED reads
 * anew per statement), where two concurrent computations would each miss the other's row. SQLite
 * runs one write transaction at a time.
 */
export async function changingDetails<T>(em: EntityManager, ids: ReadonlyArray<string | null | undefined>, write: () => Promise<T>): Promise<T> {
  const keys = [...new Set(ids.filter((id): id is string => !!id))].sort();
  if (!keys.length) return write();
  if (!em.isInTransaction()) throw new Error('changingDetails runs inside the write’s transaction.');
  const chunks = inChunks(keys);
  if (dialectOf(em) === 'postgresql') {
    for (const chunk of chunks) {
      await executeSql(em, `select id from collections where id in (${placeholders(chunk.length)}) order by id for update`, chunk);
    }
  }
  const result = await write();
  for (const chunk of chunks) {
    await executeSql(em, `update collections as c set ${STORED_FROM_LIVE_DATA} where c.id in (${placeholders(chunk.length)})`, chunk, 'run');
  }
  return result;
}
