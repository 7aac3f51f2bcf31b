import type { EntityManager } from '@mikro-orm/core';
import { dialectOf, executeSql } from '../../db/sql.js';
import { ConflictError } from '../../errors.js';
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

/** The collection rows one write touches: those whose details it changes, and those it updates itself. */
export interface DetailsWrite {
  /** Collections whose details the write changes: stored again from live data afterwards. */
  details: ReadonlyArray<string | null | undefined>;
  /** Collections the write updates itself (renamed, moved, archived): locked with the others. */
  updates?: ReadonlyArray<string | null | undefined>;
}

/**
 * Runs `write` (which changes what the details of the collections `rows.details` count), then
 * stores those details again from live data; `em` must be the write's transaction. They are
 * computed again, not moved by one: a latest change cannot be taken back by subtraction, and a
 * count computed is right whatever the write did.
 *
 * On PostgreSQL every collection row the write will update or recompute (`details` and `updates`),
 * and their parents (whose `children_version` the database bumps then), is locked first, in one
 * pass in id order (`lockedWithParents`), before any update: two writers then never wait for each
 * other in a circle (a rename that locked only the parent and then updated the collection itself
 * deadlocked with an archive that locked the collection first). Two writers under one parent store
 * their details one after the other, the second seeing the first's committed rows (READ COMMITTED
 * reads anew per statement), where two concurrent computations would each miss the other's row.
 * SQLite runs one write transaction at a time.
 *
 * `write` is given the locked collections that are still active, read after the lock: a check
 * made before it (a parent is active) may have been undone by an archive that committed since.
 */
export async function changingDetails<T>(em: EntityManager, rows: DetailsWrite, write: (active: ReadonlySet<string>) => Promise<T>): Promise<T> {
  const recompute = idsOf(rows.details);
  const keys = idsOf([...rows.details, ...(rows.updates ?? [])]);
  if (!keys.length) return write(new Set());
  if (!em.isInTransaction()) throw new Error('changingDetails runs inside the write’s transaction.');
  const postgresql = dialectOf(em) === 'postgresql';
  const active = new Set<string>();
  for (const chunk of inChunks(keys)) {
    const locked = postgresql
      ? await lockedWithParents(em, chunk)
      : await executeSql<Array<{ id: string; status: string }>>(em, `select id, status from collections where id in (${placeholders(chunk.length)})`, chunk);
    const wanted = new Set(chunk);
    for (const row of locked) if (row.status === 'active' && wanted.has(row.id)) active.add(row.id);
  }
  const result = await write(active);
  for (const chunk of inChunks(recompute)) {
    await executeSql(em, `update collections as c set ${STORED_FROM_LIVE_DATA} where c.id in (${placeholders(chunk.length)})`, chunk, 'run');
  }
  return result;
}

/**
 * PostgreSQL: locks the rows `ids` and their parents, whose `children_version` the database bumps
 * when these rows are written (migration 0012), in one pass in id order, so that bump never waits
 * for a row locked after it. The parents are read by the statement before its locks wait: a move
 * of one of the rows that commits meanwhile leaves its new parent unlocked, and the bump would
 * then lock it out of order (a deadlock with a writer holding that parent and waiting for the old
 * one). So the parents are read again under the lock (a locked row cannot move any more); if one
 * is not held, the locks are given back (rolled back to a savepoint taken before them: the rest
 * of the transaction stays) and taken again, with the new parents.
 */
async function lockedWithParents(em: EntityManager, ids: string[]): Promise<Array<{ id: string; status: string }>> {
  const list = placeholders(ids.length);
  for (let attempt = 1; ; attempt++) {
    await executeSql(em, 'savepoint locking_parents', [], 'run');
    const locked = await executeSql<Array<{ id: string; status: string }>>(
      em,
      `select id, status from collections where id in (${list}) or id in (select parent_id from collections where id in (${list})) order by id for update`,
      [...ids, ...ids],
    );
    const held = new Set(locked.map((row) => row.id));
    const parents = await executeSql<Array<{ parent_id: string | null }>>(em, `select parent_id from collections where id in (${list})`, ids);
    if (parents.every((row) => row.parent_id === null || held.has(row.parent_id))) {
      await executeSql(em, 'release savepoint locking_parents', [], 'run');
      return locked;
    }
    await executeSql(em, 'rollback to savepoint locking_parents', [], 'run');
    if (attempt === LOCK_ATTEMPTS) throw new ConflictError('The collections changed while they were being written; try again.');
  }
}

/** Tries of the lock while moves keep changing the rows' parents (each such change is one commit). */
const LOCK_ATTEMPTS = 5;

/** Distinct ids in ascending order: the one lock order of every writer. */
function idsOf(ids: ReadonlyArray<string | null | undefined>): string[] {
  return [...new Set(ids.filter((id): id is string => !!id))].sort();
}
