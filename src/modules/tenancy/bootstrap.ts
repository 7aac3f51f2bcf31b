import type { Runtime } from '../../runtime.js';
import { uuid } from '../../lib/ids.js';
import { OrganisationSchema } from './organisation.entity.js';
import { insertApiKey, insertWorkspace } from './tenancy.service.js';

export interface BootstrapResult {
  created: boolean;
  /** Set only when this start created the key and generated it (to be printed once). */
  generatedKey?: string;
  organisationId?: string;
}

/**
 * First start on an empty database: the default organisation, its `default` workspace and an
 * organisation API key (GATEWAY_BOOTSTRAP_API_KEY, or a random one the caller prints once). A later
 * start finds the organisation and changes nothing.
 */
export async function bootstrap(runtime: Runtime): Promise<BootstrapResult> {
  const em = runtime.fork();
  if ((await em.count(OrganisationSchema, {})) > 0) return { created: false };
  return em.transactional(async (tx) => {
    const now = runtime.clock.now();
    const organisation = tx.create(OrganisationSchema, { id: uuid(), name: 'Default organisation', createdAt: now, updatedAt: now });
    await tx.flush();
    const workspace = await insertWorkspace(tx, runtime, {
      organisationId: organisation.id,
      name: 'Default',
      slug: 'default',
      isDefault: true,
    });
    const configured = runtime.config.GATEWAY_BOOTSTRAP_API_KEY;
    const { key } = await insertApiKey(tx, runtime, {
      organisationId: organisation.id,
      workspaceId: null,
      type: 'organisation',
      name: 'Bootstrap key',
      key: configured,
    });
    for (const module of runtime.modules) await module.onBootstrap?.(tx, organisation, workspace, runtime);
    await tx.flush();
    return { created: true, organisationId: organisation.id, generatedKey: configured ? undefined : key };
  });
}
