import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

// Metric labels are route templates, so their number is bounded by the route table however many
// distinct URLs callers send; every path nobody serves shares the one label `unknown`.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** `route` label → summed request count, from the exposition text. */
function requestsByRoute(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^gatehouse_http_requests_total\{route="([^"]*)",[^}]*\} (\d+)$/.exec(line);
    if (m) counts.set(m[1], (counts.get(m[1]) ?? 0) + Number(m[2]));
  }
  return counts;
}

describe('metric route labels', () => {
  it('are templates for parametrised routes and one label for unknown paths', async () => {
    for (let i = 0; i < 12; i++) {
      expect((await t.request('GET', `/v1/integrations/provider-${i}-0123456789/workspaces`)).status).toBe(404);
      expect((await t.request('GET', `/v1/no-such-thing-${i}/x`)).status).toBe(404);
      expect((await t.request('GET', `/elsewhere/${i}?token=abc`, { key: null })).status).toBe(404);
      expect((await t.request('PATCH', `/v1/admin/workspaces`)).status).toBe(405);
    }
    await t.graphql('{ __typename }');

    const metrics = await t.request('GET', '/metrics', { key: null });
    expect(metrics.status).toBe(200);
    const counts = requestsByRoute(metrics.text);
    expect(Object.fromEntries(counts)).toEqual({
      '/v1/integrations/:slug/workspaces': 12,
      '/graphql': 1,
      unknown: 36,
    });
    expect(metrics.text).not.toContain('provider-');
    expect(metrics.text).not.toContain('no-such-thing');
  });

  it('every metric has a HELP text', async () => {
    const { text } = await t.request('GET', '/metrics', { key: null });
    const typed = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
    expect(typed).toContain('gatehouse_http_requests_total');
    expect(typed).toContain('gatehouse_dataplane_overhead_seconds');
    for (const name of typed) {
      const help = new RegExp(`^# HELP ${name} (.+)$`, 'm').exec(text);
      expect(help?.[1].trim().length, name).toBeGreaterThan(20);
    }
  });
});
