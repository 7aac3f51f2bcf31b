import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { GraphiQLOptions } from 'graphql-yoga';

/**
 * GraphiQL with its script, styles and editor workers inlined (Yoga's own page loads them from a
 * CDN, so it stays blank offline). The page is ~9 MB and the options never change in a process,
 * so it is rendered once per distinct options rather than on every visit.
 */
const pages = new Map<string, string>();

export function offlineGraphiQL(options: GraphiQLOptions): string {
  const key = JSON.stringify(options);
  let page = pages.get(key);
  if (page === undefined) {
    // The template opens with a line break and indentation; the page starts at its doctype.
    page = renderGraphiQL(options).trimStart();
    pages.set(key, page);
  }
  return page;
}
