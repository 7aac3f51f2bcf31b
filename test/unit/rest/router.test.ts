import { describe, expect, it } from 'vitest';
import type { RouteRow } from '../../../rest/route.js';
import { matchRoute } from '../../../rest/router.js';

const row = (method: RouteRow['method'], path: string): RouteRow => ({ method, path, operation: `${method} ${path}` });

describe('matchRoute on fixed paths (answered from a memo after the first request)', () => {
  // A parameter row before a fixed path it also matches wins, as in table order.
  const rows = [row('GET', '/v1/things/:id'), row('GET', '/v1/things/search'), row('POST', '/v1/things/search'), row('POST', '/v1/chat/completions')];

  it('gives the same answers every time, in table order', () => {
    for (let i = 0; i < 3; i++) {
      expect(matchRoute(rows, 'POST', '/v1/chat/completions')).toEqual({ kind: 'found', row: rows[3], params: {} });
      expect(matchRoute(rows, 'GET', '/v1/things/search')).toEqual({ kind: 'found', row: rows[0], params: { id: 'search' } });
      expect(matchRoute(rows, 'POST', '/v1/things/search')).toEqual({ kind: 'found', row: rows[2], params: {} });
      expect(matchRoute(rows, 'DELETE', '/v1/chat/completions')).toEqual({ kind: 'method_not_allowed', allow: ['POST'] });
      expect(matchRoute(rows, 'GET', '/v1/chat/completions')).toEqual({ kind: 'method_not_allowed', allow: ['POST'] });
      expect(matchRoute(rows, 'PUT', '/v1/things/search')).toEqual({ kind: 'method_not_allowed', allow: ['GET', 'POST'] });
      expect(matchRoute(rows, 'POST', '/v1/chat/completions/')).toEqual({ kind: 'found', row: rows[3], params: {} });
      expect(matchRoute(rows, 'POST', '/v1/chat')).toEqual({ kind: 'not_found' });
    }
  });

  it('hands each caller its own params and allow list', () => {
    const first = matchRoute(rows, 'GET', '/v1/things/search');
    if (first.kind !== 'found') throw new Error('expected a match');
    first.params.id = 'changed';
    expect(matchRoute(rows, 'GET', '/v1/things/search')).toMatchObject({ params: { id: 'search' } });
    const refused = matchRoute(rows, 'GET', '/v1/chat/completions');
    if (refused.kind !== 'method_not_allowed') throw new Error('expected a 405');
    refused.allow.push('GET');
    expect(matchRoute(rows, 'GET', '/v1/chat/completions')).toEqual({ kind: 'method_not_allowed', allow: ['POST'] });
  });
});
