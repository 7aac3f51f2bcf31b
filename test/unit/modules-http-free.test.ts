import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { filesUnder, root } from '../helpers/source-files.js';

/*
 * Services take plain facts and return plain answers: the edge (schema/, rest/, src/http/) reads
 * the request's headers once (`ctx.caller`) and applies what a service's answer says to the HTTP
 * response (schema/data-plane.ts). So no file under src/modules reads the caller's request or
 * shapes its response. (Model providers' own fetch responses, read for their status and headers,
 * are not the caller's and are not matched: they are never written.)
 */
const HTTP_SHAPED: Array<[RegExp, string]> = [
  [/\bctx\??\.(request|response)\b/, "the request context's request or response"],
  [/\brequest\??\.headers\b/, 'request.headers'],
  [/\bresponse\??\.status\s*=[^=]/, 'sets response.status'],
  [/\bresponse\??\.headers(\[[^\]]*\]\s*=[^=]|\.(set|append|delete)\()/, 'sets a response header'],
  [/from '(\.\.\/)+http\//, 'imports src/http'],
];

function offences(source: string): string[] {
  return source
    .split('\n')
    // Comments may talk about HTTP; code may not.
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
    .flatMap((line) => HTTP_SHAPED.filter(([pattern]) => pattern.test(line)).map(([, what]) => what));
}

it('no file under src/modules reads request headers or shapes the HTTP response', () => {
  const found = filesUnder(join(root, 'src', 'modules'))
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => offences(readFileSync(file, 'utf8')).map((what) => `${relative(root, file)}: ${what}`));
  expect(found).toEqual([]);
});

it('the check catches each way of doing it', () => {
  expect(offences("  const key = ctx.request?.headers.get('x-gateway-virtual-key');")).toContain('request.headers');
  expect(offences('  if (ctx.response) ctx.response.status = 246;')).toContain('sets response.status');
  expect(offences("  ctx.response.headers['x-ratelimit-limit'] = '3';")).toContain('sets a response header');
  expect(offences("  response.headers.set('retry-after', '1');")).toContain('sets a response header');
  expect(offences("import { markDataPlane } from '../../http/data-plane.js';")).toEqual(['imports src/http']);
  expect(offences("  if (response.status === 429) retry();")).toEqual([]);
  expect(offences('   * they may set `ctx.response` headers')).toEqual([]);
});
