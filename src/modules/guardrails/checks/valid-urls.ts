import { z } from 'zod';
import { defineCheck } from './check.js';
import { conditionResult, notParam } from './text-utils.js';

const parameters = z.object({
  // Accepted for compatibility with Portkey's catalogue and ignored: see below.
  onlyDNS: z.boolean().default(false),
  not: notParam,
});

/**
 * Syntactic validation only. Portkey fetches every URL (or resolves its host with onlyDNS); a
 * guardrail making outbound requests to hosts chosen by model output is an SSRF and latency risk,
 * so here both modes check that each http(s) URL parses and has a plausible host.
 */
const URL_IN_TEXT = /https?:\/\/[^\s<>"'`]+/g;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Prose punctuation after a URL ("see https://a.io.") is not part of it. A loop, not /[.,]+$/, which is quadratic on long runs. */
function trimTrailingPunctuation(u: string): string {
  let end = u.length;
  while (end > 0 && '.,;:!?)]}'.includes(u[end - 1]!)) end--;
  return u.slice(0, end);
}

export function isValidUrl(candidate: string): boolean {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const host = url.hostname;
  if (host === 'localhost' || host.startsWith('[')) return true;
  if (/^\d+(\.\d+){3}$/.test(host)) return true; // WHATWG parsing already rejected bad octets
  const labels = host.split('.');
  const tld = labels[labels.length - 1]!;
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && /^([a-z]{2,63}|xn--[a-z0-9-]+)$/.test(tld);
}

export const validUrls = defineCheck('default.validUrls', parameters, (p, ctx) => {
  const urls = (ctx.text.match(URL_IN_TEXT) ?? []).map(trimTrailingPunctuation);
  const invalid = urls.filter((u) => !isValidUrl(u));
  const fact =
    urls.length === 0 ? 'The text contains no URLs.' : invalid.length === 0 ? `All ${urls.length} URLs are valid.` : `${invalid.length} of ${urls.length} URLs are invalid.`;
  return conditionResult(invalid.length === 0, p.not, fact, { validUrls: urls.filter((u) => !invalid.includes(u)), invalidUrls: invalid, onlyDNS: p.onlyDNS });
});
