import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Generated slugs are picked and inserted in one transaction, so in one process on SQLite (one
 * connection, one transaction at a time) two creates never pick the same slug. Another process,
 * or PostgreSQL's concurrent transactions, still can: the unique index then refuses the second
 * insert, and the whole transaction runs again, picking the next free slug. Of N creates racing
 * for one name at least one wins each round, so N rounds settle them; a short random pause spreads
 * the retries so that most settle in the first few.
 */
export const SLUG_ATTEMPTS = 50;

export async function retryOnSlugConflict<T>(work: () => Promise<T>, attempts = SLUG_ATTEMPTS): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException) || attempt >= attempts) throw error;
      await sleep(Math.random() * 5 * Math.min(attempt, 10));
    }
  }
}
