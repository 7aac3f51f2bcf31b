import type { EntityManager } from '@mikro-orm/core';
import type { AnyEntity, EntitySchema } from '@mikro-orm/core';
import type { Runtime } from '../runtime.js';
import type { Organisation } from './tenancy/organisation.entity.js';
import type { Workspace } from './tenancy/workspace.entity.js';

/**
 * What a domain plugs into the application: its entities, what it does when a workspace is created
 * (in the same transaction), what it seeds on first start, and long-lived work (executors, sweeps)
 * started with the app and stopped with it.
 */
export interface DomainModule {
  name: string;
  entities: EntitySchema<AnyEntity, never>[] | EntitySchema<any, any>[];
  /** Runs inside the transaction that creates the workspace. */
  onWorkspaceCreated?(em: EntityManager, workspace: Workspace, runtime: Runtime): Promise<void>;
  /** Runs once, inside the first-start transaction, after the default organisation and workspace. */
  onBootstrap?(em: EntityManager, organisation: Organisation, workspace: Workspace, runtime: Runtime): Promise<void>;
  start?(runtime: Runtime): Promise<void> | void;
  stop?(runtime: Runtime): Promise<void> | void;
}
