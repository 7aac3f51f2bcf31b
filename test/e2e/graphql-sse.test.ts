import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  base = await t.listen();
});
afterAll(() => t.close());

const SUBSCRIPTION = 'subscription { workspaceEvents { type workspace { slug name } } }';

/** Waits (up to 2 s) until the organisation's `topicPrefix` topic has listeners, or has none. */
async function waitForListener(topicPrefix: string, present = true): Promise<void> {
  const topic = `${topicPrefix}${(await t.graphql('{ viewer { organisation { id } } }')).data.viewer.organisation.id}`;
  for (let i = 0; i < 100 && t.app.runtime.pubsub.listenerCount(topic) > 0 !== present; i++) await new Promise((r) => setTimeout(r, 20));
}

describe('GraphQL subscriptions over graphql-sse', () => {
  // A stream the previous test closed lets go of its listener a moment later; waitForListener
  // would take that one for the next test's subscription and publish before it is attached.
  beforeEach(() => waitForListener('workspaceEvents:', false));

  it('a graphql-sse client (distinct connections) receives events', async () => {
    const client = createClient({ url: `${base}/graphql/stream`, headers: { 'x-gateway-api-key': t.key } });
    const iterator = client.iterate({ query: SUBSCRIPTION });
    const first = iterator.next();
    await waitForListener('workspaceEvents:');
    await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Live One' } });
    expect((await first).value).toEqual({ data: { workspaceEvents: { type: 'created', workspace: { slug: 'live-one', name: 'Live One' } } } });
    await iterator.return?.();
    client.dispose();
  });

  it('a graphql-sse client in single-connection mode receives events', async () => {
    const client = createClient({ url: `${base}/graphql/stream`, headers: { 'x-gateway-api-key': t.key }, singleConnection: true });
    const iterator = client.iterate({ query: SUBSCRIPTION });
    const first = iterator.next();
    await waitForListener('workspaceEvents:');
    await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Live Two' } });
    expect((await first).value?.data).toEqual({ workspaceEvents: { type: 'created', workspace: { slug: 'live-two', name: 'Live Two' } } });
    await iterator.return?.();
    client.dispose();
  });

  it('Accept: text/event-stream on /graphql also serves subscriptions', async () => {
    const controller = new AbortController();
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-gateway-api-key': t.key },
      body: JSON.stringify({ query: SUBSCRIPTION }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    await waitForListener('workspaceEvents:');
    await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Live Three' } });
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes('live-three')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain('"slug":"live-three"');
    controller.abort();
  });

  it('a subscription without a key is refused', async () => {
    const client = createClient({ url: `${base}/graphql/stream`, retryAttempts: 0 });
    await expect(client.iterate({ query: SUBSCRIPTION }).next()).rejects.toBeTruthy();
    client.dispose();
  });

  it('shutdown ends open streams cleanly', async () => {
    const other = await createTestApp();
    const url = await other.listen();
    const client = createClient({ url: `${url}/graphql/stream`, headers: { 'x-gateway-api-key': other.key }, retryAttempts: 0 });
    const iterator = client.iterate({ query: SUBSCRIPTION });
    const next = iterator.next();
    const topic = `workspaceEvents:${(await other.graphql('{ viewer { organisation { id } } }')).data.viewer.organisation.id}`;
    for (let i = 0; i < 100 && other.app.runtime.pubsub.listenerCount(topic) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    other.app.runtime.beginShutdown();
    // The stream completes (done), it does not error.
    await expect(next).resolves.toEqual({ done: true, value: undefined });
    expect(other.app.runtime.pubsub.listenerCount(topic)).toBe(0);
    client.dispose();
    await other.close();
  });
});
