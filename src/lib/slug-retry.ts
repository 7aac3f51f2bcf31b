import { UniqueConstraintViolationException } from '@mikro-orm/core';

/**
 * Generated slugs are picked and inserted in one transaction, so in one process (one SQLite
 * connection, one transaction at a time) two creates never pick the same slug. Another process
 * (or PostgreSQL's concurrent transactions) still can: the unique index then refuses the second
 * insert, and the whole transaction runs again, picking the next free slug.
 */
export const SLUG_ATTEMPTS = 5;

export async function retryOnSlugConflict<T>(work: () => Promise<T>, attempts = SLUG_ATTEMPTS): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException) || attempt >= attempts) throw error;
    }
  }
}
