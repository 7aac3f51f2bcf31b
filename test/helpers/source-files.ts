import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root. */
export const root = join(import.meta.dirname, '..', '..');

/** Every file under `dir` (absolute), depth first. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}
