import { dialectOf, executeSql } from '../../db/sql.js';
import { raw, type EntityManager, type QueryOrderMap } from '@mikro-orm/core';
import { WorkspaceSchema, type Workspace } from '../tenancy/workspace.entity.js';
import type { Runtime } from '../../runtime.js';
import type { Collection } from './collection.entity.js';
import { PromptVersionSchema, type PromptVersion } from './prompt-version.entity.js';
import { PromptSchema, type Prompt } from './prompt.entity.js';

/**
 * Batch reads behind the GraphQL dataloaders: each takes every key of one level of a query and
 * answers with a fixed number of statements, so a nested read costs statements per level, not per
 * row. Results come back in key order. They do no tenancy checks: they are only reached from a
 * collection or prompt the caller could already see, and trees never cross a workspace.
 */

/** Names in the order people read them: case-insensitive, then exact, then id (stable pages). */
export function byName<T>(): QueryOrderMap<T> {
  return { [raw('lower(name)')]: 'asc', name: 'asc', id: 'asc' } as QueryOrderMap<T>;
}

/** Keys per statement: far below SQLite's 32766 and PostgreSQL's 65535 bound parameters. */
const CHUNK = 10_000;

export function inChunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

async function findIn<T>(keys: readonly string[], query: (chunk: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (const chunk of inChunks([...new Set(keys)])) out.push(...(await query(chunk)));
  return out;
}

function groupBy<T>(keys: readonly string[], rows: T[], keyOf: (row: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const key = keyOf(row);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push(row);
  }
  return keys.map((key) => groups.get(key) ?? []);
}

/** A raw statement on the EntityManager's connection, inside its transaction when it has one. */
export async function rawAll<T>(em: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  return executeSql<T[]>(em, sql, params);
}

export function placeholders(n: number): string {
  return new Array(n).fill('?').join(', ');
}

/** A raw aggregate's time: SQLite stores milliseconds, PostgreSQL returns a Date or a string. */
function toDate(value: unknown): Date | null {
  if (value == null) return null;
  if (typeof value === 'number') return storedTime(value);
  if (value instanceof Date) return storedTime(value.getTime());
  const text = String(value);
  return storedTime(/^\d+$/.test(text) ? Number(text) : text);
}

/**
 * A `StoredTime`, made by Date itself with StoredTime's prototype: `new StoredTime(...)` (the
 * constructor of a class derived from Date) cost V8 ~0.7 µs more than a Date, doubling the CPU of
 * building a 1,000-child level (1.5 -> 2.9 ms); made this way, ~0.05 µs more.
 */
const storedTime = (value: number | string): Date => Reflect.construct(Date, [value], StoredTime) as Date;

/**
 * A time of a collection read here (`ReadCollection`, made by `storedTime`): a Date that keeps the
 * ISO text it last wrote. The DateTime scalar writes every time with `toISOString` (~0.5 µs a call,
 * printed by V8 in C++), and a level kept by `childCollectionsOf` is written again on every read of it:
 * its 1,000 to 3,000 times are printed once, not once per read. The text is kept with the time it
 * was written for, so a Date changed since (`setTime`…) writes its new time.
 */
export class StoredTime extends Date {
  declare private writtenMs: number | undefined;
  declare private writtenText: string;

  override toISOString(): string {
    const ms = this.getTime();
    if (this.writtenMs !== ms) {
      this.writtenText = super.toISOString();
      this.writtenMs = ms;
    }
    return this.writtenText;
  }
}

/** A `collections` row as the database returns it (SQLite: times in milliseconds, booleans 0/1). */
interface CollectionRow {
  id: string;
  organisation_id: string;
  workspace_id: string;
  parent_id: string | null;
  name: string;
  slug: string;
  is_default: unknown;
  status: Collection['status'];
  created_at: unknown;
  last_updated_at: unknown;
  child_collections_count: number | string;
  child_collections_last_updated_at: unknown;
  prompts_count: number | string;
  prompts_last_updated_at: unknown;
}

/**
 * A read-only collection from a plain read: the same fields as the entity, outside the identity
 * map, its details fields as read (never older than the request). A class, not an object literal:
 * the literal's computed mark (a symbol key) made each object slow to build and twice the size.
 */
class ReadCollection {
  declare id: string;
  declare organisationId: string;
  declare workspaceId: string;
  declare parentId: string | null;
  declare name: string;
  declare slug: string;
  declare isDefault: boolean;
  declare status: Collection['status'];
  declare createdAt: Date;
  declare lastUpdatedAt: Date;
  declare childCollectionsCount: number;
  declare childCollectionsLastUpdatedAt: Date | null;
  declare promptsCount: number;
  declare promptsLastUpdatedAt: Date | null;

  constructor(
    id: string,
    organisationId: string,
    workspaceId: string,
    parentId: string | null,
    name: string,
    slug: string,
    isDefault: unknown,
    status: Collection['status'],
    createdAt: unknown,
    lastUpdatedAt: unknown,
    childCollectionsCount: unknown,
    childCollectionsLastUpdatedAt: unknown,
    promptsCount: unknown,
    promptsLastUpdatedAt: unknown,
  ) {
    this.id = id;
    this.organisationId = organisationId;
    this.workspaceId = workspaceId;
    this.parentId = parentId;
    this.name = name;
    this.slug = slug;
    this.isDefault = Boolean(isDefault);
    this.status = status;
    this.createdAt = toDate(createdAt)!;
    this.lastUpdatedAt = toDate(lastUpdatedAt)!;
    this.childCollectionsCount = Number(childCollectionsCount);
    this.childCollectionsLastUpdatedAt = toDate(childCollectionsLastUpdatedAt);
    this.promptsCount = Number(promptsCount);
    this.promptsLastUpdatedAt = toDate(promptsLastUpdatedAt);
  }

  /** Its details: its own fields, read with it (a getter: JSON.stringify of a collection leaves it out). */
  get details(): CollectionDetails {
    return this;
  }
}

/** A collection read from its `collections` row. */
function collectionOf(row: CollectionRow): CollectionRead {
  return new ReadCollection(
    row.id,
    row.organisation_id,
    row.workspace_id,
    row.parent_id,
    row.name,
    row.slug,
    row.is_default,
    row.status,
    row.created_at,
    row.last_updated_at,
    row.child_collections_count,
    row.child_collections_last_updated_at,
    row.prompts_count,
    row.prompts_last_updated_at,
  ) as CollectionRead;
}

/**
 * A collection as every read here answers it (`ReadCollection`): a plain, read-only object with
 * its details (its stored fields, read in the same statement), so answering them is a property
 * read, never a statement or a promise per collection. Managed entities are not given to readers:
 * a write of the request may store new details after an entity was loaded (schema/collections.ts
 * reads a mutation's collection again).
 */
export type CollectionRead = Collection & { readonly details: CollectionDetails };

/** The stored details (collection-details.ts) of the collection aliased `c`, in `CollectionDetails`'s order. */
const DETAILS_COLUMNS = 'c.child_collections_count, c.child_collections_last_updated_at, c.prompts_count, c.prompts_last_updated_at';

/** A collection's columns, on `collections c` (`CollectionRow`). */
const COLLECTION_COLUMNS = `c.id, c.organisation_id, c.workspace_id, c.parent_id, c.name, c.slug, c.is_default, c.status,
  c.created_at, c.last_updated_at, ${DETAILS_COLUMNS}`;

/** A level of one parent: its row, and its children `[id, name, slug, is_default, created_at, last_updated_at, ...details]` each. */
interface ChildrenRow {
  parent_id: string;
  organisation_id: string;
  workspace_id: string;
  /** The parent's `children_version` in the same statement: the version these children are. */
  children_version: number | string;
  /** Null when the kept level is current (`KEPT_AS`); text on SQLite; PostgreSQL's driver parses `json` itself. */
  children: string | unknown[][] | null;
}

/**
 * What a kept level was read at, as the statement writes it from the parent's row: its version,
 * organisation and workspace (each child carries the last two). Compared in the statement, so a
 * current level costs one text comparison and no children.
 */
const KEPT_AS = "cast(p.children_version as text) || ' ' || p.organisation_id || ' ' || p.workspace_id";
const keptAs = (version: number | string, organisationId: string, workspaceId: string) => `${Number(version)} ${organisationId} ${workspaceId}`;

/**
 * The `KEPT_AS` of a parent's kept level, from the bound JSON object `{ [parent id]: KEPT_AS }`,
 * and the JSON array of one level's children: the same functions under each dialect's names, with
 * the order they are aggregated in (`sortedAsSqlite`). SQLite's aggregate of no rows is `[]`,
 * PostgreSQL's null (kept for "the kept level is current").
 */
const DIALECT = {
  sqlite: {
    kept: `json_extract(?, '$."' || p.id || '"')`,
    children: (columns: string) => `select json_group_array(json_array(${columns}))`,
  },
  postgresql: {
    kept: '(?::json ->> cast(p.id as text))',
    children: (columns: string) => `select coalesce(json_agg(json_build_array(${columns}) order by lower(c.name) asc, c.name asc, c.id asc), '[]'::json)`,
  },
} as const;

/**
 * Direct, non-archived children of each parent, ordered by name (then id, as `byName`; on SQLite
 * sorted here: `sortedAsSqlite`), each with its details (`CollectionRead`), as plain objects
 * outside the identity map: a level can hold thousands of children that are only read.
 *
 * One statement per chunk of parents, one row per parent found (empty levels too): the parent's
 * version, organisation and workspace, and its children unless the level kept for it
 * (`KeptLevels`, per runtime) was read at the same ones; then the kept level is given again. The
 * version is the database's (migration 0012: triggers bump it on every write of a child, by any
 * process or raw SQL), so an unchanged level costs neither its children nor building them: for
 * 1,000 children SQLite's ~100 KB of JSON text, most of the read; and a level costs the same one
 * statement warm or cold, kept or not, leaf or not.
 *
 * The children come as a JSON array of arrays: building a row object per child (better-sqlite3)
 * cost twice the statement plus one `JSON.parse`, and the parent's organisation, workspace and id,
 * equal for all its children (trees never cross a workspace), are read once, from the parent. The
 * details are the children's stored columns (collection-details.ts): four lookups per child cost
 * more than the child itself, and loaded through a dataloader a promise chain per child.
 */
export async function childCollectionsOf(
  runtime: Pick<Runtime, 'singleton'>,
  em: EntityManager,
  parentIds: readonly string[],
): Promise<CollectionRead[][]> {
  const kept = keptLevelsOf(runtime);
  const sql = DIALECT[dialectOf(em)];
  // The kept levels the statement is asked about: a row answering "still current" means this
  // level, whatever the kept set holds by then (another row of this read, or another request,
  // may have dropped or replaced it meanwhile).
  const asked = new Map<string, KeptLevel>();
  const rows = await findIn(parentIds, (chunk) => {
    const keptAt: Record<string, string> = {};
    for (const id of chunk) {
      const level = kept.levels.get(id);
      if (!level) continue;
      keptAt[id] = level.keptAs;
      asked.set(id, level);
    }
    return rawAll<ChildrenRow>(
      em,
      `select p.id as parent_id, p.organisation_id, p.workspace_id, p.children_version,
         case when ${KEPT_AS} = ${sql.kept} then null else (
           ${sql.children(`c.id, c.name, c.slug, c.is_default, c.created_at, c.last_updated_at, ${DETAILS_COLUMNS}`)}
           from collections c where c.parent_id = p.id and c.status = 'active'
         ) end as children
       from collections p where p.id in (${placeholders(chunk.length)})`,
      [JSON.stringify(keptAt), ...chunk],
    );
  });
  // Kept only from outside a transaction: a level written by a transaction that may yet roll back
  // would be kept at a version a later write could reach with other children.
  const keep = !em.isInTransaction();
  const byParent = new Map<string, readonly CollectionRead[]>();
  for (const row of rows) {
    if (row.children === null) {
      byParent.set(row.parent_id, kept.stillCurrent(row.parent_id, asked.get(row.parent_id)!));
      continue;
    }
    const children = Object.freeze(
      (typeof row.children === 'string' ? sortedAsSqlite(JSON.parse(row.children) as unknown[][]) : row.children).map((child) =>
        Object.freeze(childOf(row, child)),
      ),
    );
    byParent.set(row.parent_id, children);
    if (keep) kept.keep(row.parent_id, keptAs(row.children_version, row.organisation_id, row.workspace_id), children);
    else kept.forget(row.parent_id);
  }
  return parentIds.map((id) => (byParent.get(id) ?? []) as CollectionRead[]);
}

/** A level of children as kept: the version, organisation and workspace it was read at (`keptAs`). */
export interface KeptLevel {
  keptAs: string;
  children: readonly CollectionRead[];
}

/**
 * Levels `childCollectionsOf` read outside a transaction, by parent id, most recently read last,
 * up to `KEPT_LEVELS_CHILDREN` children in all (an empty level counts as one): at ~0.7 KB a child,
 * a few MB. One per runtime: `children_version` counts from 0 in each database, so two
 * applications in one process (tests, two databases) must never see each other's levels. Kept
 * levels are shared by every request that reads them: frozen, arrays and children (they are only
 * read: schema/collections.ts).
 */
export class KeptLevels {
  readonly levels = new Map<string, KeptLevel>();
  /** The children of `levels`, in all (an empty level counts as one). */
  children = 0;

  /**
   * `level`, which the statement found current: its children, and it is now the most recently
   * read if it is still the one kept (it may have been dropped or replaced since it was asked about).
   */
  stillCurrent(parentId: string, level: KeptLevel): readonly CollectionRead[] {
    if (this.levels.get(parentId) === level) {
      this.levels.delete(parentId);
      this.levels.set(parentId, level);
    }
    return level.children;
  }

  forget(parentId: string): void {
    const level = this.levels.get(parentId);
    if (!level) return;
    this.levels.delete(parentId);
    this.children -= weightOf(level.children);
  }

  /** Keeps a level just read, dropping the least recently read ones over the bound (one alone over it is not kept). */
  keep(parentId: string, keptAs: string, children: readonly CollectionRead[]): void {
    this.forget(parentId);
    if (weightOf(children) > KEPT_LEVELS_CHILDREN) return;
    this.levels.set(parentId, { keptAs, children });
    this.children += weightOf(children);
    for (const [oldest] of this.levels) {
      if (this.children <= KEPT_LEVELS_CHILDREN) break;
      this.forget(oldest);
    }
  }
}

export const KEPT_LEVELS_CHILDREN = 10_000;
const weightOf = (children: readonly unknown[]) => children.length || 1;

export const keptLevelsOf = (runtime: Pick<Runtime, 'singleton'>): KeptLevels => runtime.singleton('collections.keptLevels', () => new KeptLevels());

/**
 * A level's children (`childCollectionsOf`'s arrays, SQLite's text) in `byName` order as SQLite
 * orders them: its lower() folds ASCII letters only, and it compares text as UTF-8 bytes, that is
 * by code point. PostgreSQL's aggregate sorts its own (its collation decides). SQLite's sorter
 * carries each child's whole array: for 1,000 children it cost 0.8 of the statement's 1.8 ms CPU;
 * the same order here, from the parsed arrays, 0.3 ms (unit/collections/children-order). The
 * arrays are sorted in place, compared character by character with the folding done on the fly:
 * a folded copy of each name and a wrapper per child were 0.4 KB of garbage per child.
 */
export function sortedAsSqlite(children: unknown[][]): unknown[][] {
  return children.sort(
    (a, b) => byFoldedCodePoint(a[1] as string, b[1] as string) || byCodePoint(a[1] as string, b[1] as string) || byCodePoint(a[0] as string, b[0] as string),
  );
}

/** SQLite's `lower(a) < lower(b)`: ASCII letters folded, then code point order (`byCodePoint`). */
function byFoldedCodePoint(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 65 && x <= 90) x += 32;
      if (y >= 65 && y <= 90) y += 32;
      if (x !== y) return codePointRank(x) - codePointRank(y);
    }
  }
  return a.length - b.length;
}

/** Code point order: where the texts first differ, a surrogate (a code point from U+10000) ranks after U+E000–U+FFFF. */
function byCodePoint(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

const codePointRank = (unit: number): number => (unit < 0xd800 ? unit : unit <= 0xdfff ? unit + 0x2000 : unit - 0x800);

/** A child collection from its parent's row and its own array (`childCollectionsOf`). */
function childOf(parent: ChildrenRow, child: unknown[]): CollectionRead {
  return new ReadCollection(
    child[0] as string,
    parent.organisation_id,
    parent.workspace_id,
    parent.parent_id,
    child[1] as string,
    child[2] as string,
    child[3],
    'active',
    child[4],
    child[5],
    child[6],
    child[7],
    child[8],
    child[9],
  ) as CollectionRead;
}

/** The columns a `collectionsWhere` condition may name. */
const WHERE_COLUMNS = { organisationId: 'organisation_id', workspaceId: 'workspace_id', id: 'id', slug: 'slug' } as const;
export type CollectionWhere = Partial<Record<keyof typeof WHERE_COLUMNS, string>>;

/**
 * Collections equal to every value of `where` (any status), each with its details, in one
 * statement: a read of one collection by id or slug, answered as plain objects like a level of
 * children (the query builder and hydration of one managed entity cost more than the read itself).
 */
export async function collectionsWhere(em: EntityManager, where: CollectionWhere): Promise<CollectionRead[]> {
  const names = Object.keys(where) as Array<keyof CollectionWhere>;
  const conditions = names.map((name) => {
    if (!(name in WHERE_COLUMNS)) throw new Error(`collectionsWhere cannot filter on ${name}.`);
    return `c.${WHERE_COLUMNS[name]} = ?`;
  });
  const rows = await rawAll<CollectionRow>(
    em,
    `select ${COLLECTION_COLUMNS} from collections c where ${conditions.join(' and ')}`,
    names.map((name) => where[name]),
  );
  return rows.map(collectionOf);
}

/** Non-archived prompts of each collection, ordered by name (then id). */
export async function promptsOf(em: EntityManager, collectionIds: readonly string[]): Promise<Prompt[][]> {
  const rows = await findIn(collectionIds, (chunk) =>
    em.find(PromptSchema, { collectionId: { $in: chunk }, status: 'active' }, { orderBy: byName<Prompt>() }),
  );
  return groupBy(collectionIds, rows, (row) => row.collectionId);
}

/** Every version of each prompt, newest first. */
export async function promptVersionsOf(em: EntityManager, promptIds: readonly string[]): Promise<PromptVersion[][]> {
  const rows = await findIn(promptIds, (chunk) =>
    em.find(PromptVersionSchema, { promptId: { $in: chunk } }, { orderBy: { version: 'desc' } }),
  );
  return groupBy(promptIds, rows, (row) => row.promptId);
}

/** The key `currentVersionsOf` loads a prompt's current version by. */
export const currentVersionKey = (prompt: Pick<Prompt, 'id' | 'version'>): string => `${prompt.id}@${prompt.version}`;

/**
 * The current version of each prompt, by `currentVersionKey`: one query per chunk of prompts (the
 * rows of those prompts at any of the wanted version numbers; the exact pairs are picked here, as
 * a long OR of pairs would exceed SQLite's expression depth).
 */
export async function currentVersionsOf(em: EntityManager, keys: readonly string[]): Promise<PromptVersion[]> {
  const rows = await findIn(keys, (chunk) => {
    const pairs = chunk.map((key) => key.split('@'));
    const versions = [...new Set(pairs.map(([, version]) => Number(version)))];
    return em.find(PromptVersionSchema, { promptId: { $in: pairs.map(([id]) => id) }, version: { $in: versions } });
  });
  const byKey = new Map(rows.map((row) => [currentVersionKey({ id: row.promptId, version: row.version }), row]));
  return keys.map((key) => byKey.get(key)!);
}

export async function workspacesByIds(em: EntityManager, ids: readonly string[]): Promise<Array<Workspace | null>> {
  const rows = await findIn(ids, (chunk) => em.find(WorkspaceSchema, { id: { $in: chunk } }));
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id) ?? null);
}

/** A collection's details (collection-details.ts): fields it stores. */
export type CollectionDetails = Pick<Collection, 'childCollectionsCount' | 'promptsCount' | 'childCollectionsLastUpdatedAt' | 'promptsLastUpdatedAt'>;

/** Collections by id (any status; null for an unknown id), with their details: one statement per chunk. */
export async function collectionsByIds(em: EntityManager, ids: readonly string[]): Promise<Array<CollectionRead | null>> {
  const rows = await findIn(ids, (chunk) =>
    rawAll<CollectionRow>(em, `select ${COLLECTION_COLUMNS} from collections c where c.id in (${placeholders(chunk.length)})`, chunk),
  );
  const byId = new Map(rows.map((row) => [row.id, collectionOf(row)]));
  return ids.map((id) => byId.get(id) ?? null);
}

/**
 * The ids of each collection's ancestors, nearest first, in one recursive statement. UNION (not
 * UNION ALL) and the depth bound keep it finite even if a cycle ever reached the table.
 */
export async function ancestorIdsOf(em: EntityManager, ids: readonly string[]): Promise<string[][]> {
  type Row = { start_id: string; id: string; depth: number | string };
  const rows = await findIn<Row>(ids, (chunk) =>
    rawAll<Row>(
      em,
      `with recursive chain(start_id, id, parent_id, depth) as (
         select id, id, parent_id, 0 from collections where id in (${placeholders(chunk.length)})
         union
         select chain.start_id, c.id, c.parent_id, chain.depth + 1
         from collections c join chain on c.id = chain.parent_id
         where chain.depth < 100000
       )
       select start_id, id, depth from chain where depth > 0`,
      chunk,
    ),
  );
  const sorted = [...rows].sort((a, b) => Number(a.depth) - Number(b.depth));
  return groupBy(ids, sorted, (row) => row.start_id).map((group) => group.map((row) => row.id));
}

/** Each collection's ancestors, root first: two statements for any number of collections. */
export async function ancestorsOf(em: EntityManager, ids: readonly string[]): Promise<CollectionRead[][]> {
  const chains = await ancestorIdsOf(em, ids);
  const all = [...new Set(chains.flat())];
  const loaded = all.length ? await collectionsByIds(em, all) : [];
  const byId = new Map(loaded.filter((c): c is CollectionRead => c !== null).map((c) => [c.id, c]));
  return chains.map((chain) => chain.map((id) => byId.get(id)).filter((c): c is CollectionRead => !!c).reverse());
}

/** Ids of every collection under `rootId` (not itself), in one recursive statement. */
export async function descendantIdsOf(em: EntityManager, rootId: string): Promise<string[]> {
  const rows = await rawAll<{ id: string }>(
    em,
    `with recursive sub(id) as (
       select id from collections where parent_id = ?
       union
       select c.id from collections c join sub on c.parent_id = sub.id
     )
     select id from sub`,
    [rootId],
  );
  return rows.map((row) => row.id);
}
