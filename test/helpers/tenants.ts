import { insertApiKey, insertWorkspace } from '../../src/modules/tenancy/tenancy.service.js';
import { OrganisationSchema } from '../../src/modules/tenancy/organisation.entity.js';
import { uuid } from '../../src/lib/ids.js';
import type { TestApp } from './app.js';

/**
 * A second organisation with its own default workspace and organisation key, made directly through
 * the services (the HTTP API never creates organisations: one install, one bootstrap organisation).
 */
export async function createOtherOrganisation(t: TestApp, name = 'Other org'): Promise<{ organisationId: string; workspaceId: string; key: string }> {
  const runtime = t.app.runtime;
  return runtime.fork().transactional(async (em) => {
    const now = runtime.clock.now();
    const organisation = em.create(OrganisationSchema, { id: uuid(), name, createdAt: now, updatedAt: now });
    await em.flush();
    const workspace = await insertWorkspace(em, runtime, { organisationId: organisation.id, name: 'Default', slug: 'default', isDefault: true });
    const { key } = await insertApiKey(em, runtime, { organisationId: organisation.id, workspaceId: null, type: 'organisation', name: 'other' });
    return { organisationId: organisation.id, workspaceId: workspace.id, key };
  });
}

/** A workspace in the bootstrap organisation and a workspace key for it, through the REST API. */
export async function createWorkspaceWithKey(t: TestApp, name: string): Promise<{ workspaceId: string; slug: string; key: string }> {
  const ws = await t.request('POST', '/v1/admin/workspaces', { body: { name } });
  if (ws.status !== 200) throw new Error(`workspace: ${ws.status} ${ws.text}`);
  const key = await t.request('POST', '/v1/admin/api-keys', { body: { name: `${name} key`, type: 'workspace', workspace_id: ws.body.id } });
  if (key.status !== 200) throw new Error(`key: ${key.status} ${key.text}`);
  return { workspaceId: ws.body.id, slug: ws.body.slug, key: key.body.key };
}
