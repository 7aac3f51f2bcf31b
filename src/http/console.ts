import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'graphql-yoga';
import { MethodNotAllowedError, unknownUrl } from '../errors.js';
import { appErrorResponse } from './error-response.js';
import { recordRoute } from './route-label.js';

/** The web console's static files (plain HTML, CSS and ES modules: nothing to build, nothing fetched). */
const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));
const PREFIX = '/console';

/** `/console` and every path under it: the served-paths plugin passes these on to the console. */
export function isConsolePath(pathname: string): boolean {
  return pathname === PREFIX || pathname.startsWith(`${PREFIX}/`);
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The console only talks to this origin: a script, style or request elsewhere is refused by the
 * browser, so "works offline" holds by construction. It never appears in a frame (the API key is
 * typed into it).
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Each start serves the files of its own checkout; the browser asks again rather than keep old ones.
  'cache-control': 'no-cache',
};

interface StaticFile {
  body: Buffer;
  type: string;
}

/**
 * Every file of the folder, read once: only these paths are served, so no URL can reach outside it.
 * `/console` and `/console/` are its index page.
 */
function loadFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const type = TYPES[extname(entry.name)];
    if (!entry.isFile() || !type) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(`${PREFIX}/${relative(dir, path).split(sep).join('/')}`, { body: readFileSync(path), type });
  }
  const index = files.get(`${PREFIX}/index.html`);
  if (!index) throw new Error(`The console's index.html is missing from ${dir}.`);
  files.set(PREFIX, index);
  files.set(`${PREFIX}/`, index);
  return files;
}

/**
 * Serves `/console` (GET and HEAD); other paths pass on. Listed after the edge plugins, which
 * give the request its id and pass console paths on; their response plugins (request id,
 * metrics, access line) run on its answers.
 */
export function consolePlugin(dir = CONSOLE_DIR): Plugin {
  const files = loadFiles(dir);
  return {
    onRequest({ request, url, endResponse }) {
      const pathname = url.pathname;
      if (!isConsolePath(pathname)) return;
      // One label for the folder: the set of files is fixed, but unknown paths must not add labels.
      recordRoute(request, PREFIX);
      const file = files.get(pathname);
      if (!file) return endResponse(appErrorResponse(unknownUrl(request.method, pathname)));
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return endResponse(appErrorResponse(new MethodNotAllowedError(request.method, pathname, ['GET', 'HEAD'])));
      }
      const headers = { ...SECURITY_HEADERS, 'content-type': file.type, 'content-length': String(file.body.length) };
      endResponse(new Response(request.method === 'HEAD' ? null : new Uint8Array(file.body), { status: 200, headers }));
    },
  };
}
