import { isUuid, slugify } from '../../lib/ids.js';

/**
 * The slug a name asks for. Slugs are looked up wherever ids are, so a slug must never read as a
 * UUID: such a base is treated as taken and always gets a suffix (`<uuid>-2`).
 */
export function slugBase(name: string, fallback: string): string {
  return slugify(name, fallback);
}

/** The first free slug among `base`, `base-2`, `base-3`, … given the taken ones that start with `base`. */
export function firstFreeSlug(base: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  if (!used.has(base) && !isUuid(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}
