import type { CallerFacts } from '../context.js';

/** Headers a caller names the virtual key with, first wins. */
const VIRTUAL_KEY_HEADERS = ['x-gateway-virtual-key', 'x-portkey-virtual-key'];
/** Headers a caller sends request metadata in (a JSON object of strings), first wins. */
const METADATA_HEADERS = ['x-gateway-metadata', 'x-portkey-metadata'];

/** The request's headers as the plain facts services take (see `CallerFacts`). */
export function callerFacts(headers: Headers): CallerFacts {
  const all: Record<string, string> = {};
  headers.forEach((value, name) => {
    all[name.toLowerCase()] = value;
  });
  const virtualKey = VIRTUAL_KEY_HEADERS.map((name) => all[name]).find((v) => v) ?? null;
  const metadataName = METADATA_HEADERS.find((name) => all[name]);
  return {
    virtualKey,
    metadataHeader: metadataName ? { name: metadataName, value: all[metadataName] } : null,
    headers: all,
  };
}
