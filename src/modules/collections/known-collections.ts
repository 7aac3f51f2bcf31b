import type { CollectionRead } from './collection-loaders.js';

/**
 * The collections a request's resolvers have already returned (a collection, a page, a level of
 * children, ancestors, a mutation's result), so that a later load by id (`parent`, a prompt's
 * `collection`) needs no statement. They are kept as the lists they came in, and indexed by id
 * only when a load first asks: a level of 1,000 children costs one push. Priming the request's
 * dataloader with each (pothos `cacheResolved`) made a promise and a map entry per child on every
 * read of a level, asked for or not: ~140 KB and ~0.15 ms CPU per 1,000 children.
 *
 * The first collection kept for an id is the one given (as a dataloader's prime keeps the first).
 */
export class KnownCollections {
  private readonly lists: Array<readonly CollectionRead[]> = [];
  private readonly byId = new Map<string, CollectionRead>();
  /** Lists already in `byId`. */
  private indexed = 0;

  add(list: readonly CollectionRead[]): void {
    if (list.length) this.lists.push(list);
  }

  get(id: string): CollectionRead | undefined {
    for (; this.indexed < this.lists.length; this.indexed++) {
      for (const collection of this.lists[this.indexed]) {
        if (!this.byId.has(collection.id)) this.byId.set(collection.id, collection);
      }
    }
    return this.byId.get(id);
  }
}
