import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { errorResponse } from '../helpers/errors.js';

/** The console's files and the offline GraphiQL page over HTTP; the browser test drives them. */
describe('console and GraphiQL pages', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('serves the index page at /console and /console/, with a policy that allows this origin only', async () => {
    for (const path of ['/console', '/console/', '/console/index.html']) {
      const r = await t.request('GET', path, { key: null });
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(r.text).toContain('<script type="module" src="/console/js/main.js"></script>');
      expect(r.headers.get('content-security-policy')).toContain("default-src 'none'; script-src 'self'; style-src 'self'");
      expect(r.headers.get('x-gateway-request-id')).toMatch(/.+/);
    }
  });

  it('serves its scripts and styles with their types, and HEAD without a body', async () => {
    const js = await t.request('GET', '/console/js/views/usage.js', { key: null });
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.text).toContain('export async function usageView');
    const css = await t.request('HEAD', '/console/console.css', { key: null });
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(Number(css.headers.get('content-length'))).toBeGreaterThan(100);
    expect(css.text).toBe('');
  });

  it('answers 404 for a file it does not hold (no path leaves the folder) and 405 for other methods', async () => {
    for (const path of ['/console/nope.js', '/console/../package.json', '/console/%2e%2e/package.json', '/consoles']) {
      const r = await t.request('GET', path, { key: null });
      expect(r.status, path).toBe(404);
      expect(r.body.error.code).toBe('unknown_url');
    }
    const post = await t.request('POST', '/console', { key: null, body: {} });
    expect(post.status).toBe(405);
    expect(post.body).toEqual(errorResponse(405, 'Method POST is not allowed on /console. Allowed: GET, HEAD.', null, 'method_not_allowed').body);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('labels every console request with one route in the metrics', async () => {
    await t.request('GET', '/console/unknown-1', { key: null });
    const metrics = await t.request('GET', '/metrics', { key: null });
    expect(metrics.text).toMatch(/gatehouse_http_requests_total\{[^}]*route="\/console"[^}]*\} \d+/);
    expect(metrics.text).not.toContain('unknown-1');
  });

  it('renders GraphiQL with its script, styles and workers inline (nothing from another host)', async () => {
    const r = await t.request('GET', '/graphql', { key: null, headers: { accept: 'text/html' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/html');
    expect(r.text).toMatch(/^<!doctype html>/i);
    expect(r.text).toContain('YogaGraphiQL.renderYogaGraphiQL');
    expect(r.text).not.toMatch(/<(script|link)[^>]+(src|href)="?https?:/);
    expect(r.text).not.toContain('unpkg.com');
  });
});
