import type { ServiceContext } from '../context.js';
import { MAX_PAGE_SIZE, type Page, type PageInput } from '../lib/paging.js';
import { listWorkspaces } from '../modules/tenancy/tenancy.service.js';

/** Every item of a paged list (the CLI prints whole lists). */
export async function allPages<T>(read: (page: PageInput) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  for (let currentPage = 0; ; currentPage++) {
    const page = await read({ currentPage, pageSize: MAX_PAGE_SIZE });
    out.push(...page.data);
    if (!page.data.length || out.length >= page.total) return out;
  }
}

/** Workspace id → slug, for printing ids people can read. */
export async function workspaceSlugs(ctx: ServiceContext): Promise<Map<string, string>> {
  return new Map((await listWorkspaces(ctx)).map((w) => [w.id, w.slug]));
}
