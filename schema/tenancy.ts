import type { ApiKey } from '../src/modules/tenancy/api-key.entity.js';
import type { Organisation } from '../src/modules/tenancy/organisation.entity.js';
import type { Workspace } from '../src/modules/tenancy/workspace.entity.js';
import * as tenancy from '../src/modules/tenancy/tenancy.service.js';
import type { CreatedApiKey } from '../src/modules/tenancy/tenancy.service.js';
import * as contract from '../src/modules/tenancy/tenancy.contract.js';
import { builder } from './builder.js';
import { contractInputType, parseInput } from './contract-input.js';

export const OrganisationRef = builder.objectRef<Organisation>('Organisation').implement({
  description: 'A tenant: owns workspaces, API keys, integrations and guardrails.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
  }),
});

export const WorkspaceRef = builder.objectRef<Workspace>('Workspace').implement({
  description: 'A unit of isolation inside an organisation: its own collections, threads, runs and providers.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    organisationId: t.exposeID('organisationId', { description: 'The owning organisation.' }),
    slug: t.exposeString('slug', { description: 'Unique in the organisation; usable wherever an id is.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    description: t.exposeString('description', { nullable: true, description: 'Free text.' }),
    isDefault: t.exposeBoolean('isDefault', { description: "True for the organisation's default workspace." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
  }),
});

export const ApiKeyTypeEnum = builder.enumType('ApiKeyType', {
  description: 'Organisation keys act in every workspace of their organisation; workspace keys in one.',
  values: { organisation: { description: 'Organisation-wide.' }, workspace: { description: 'One workspace.' } } as const,
});

export const ApiKeyStatusEnum = builder.enumType('ApiKeyStatus', {
  description: 'Revoked keys are refused with 401.',
  values: { active: { description: 'Usable.' }, revoked: { description: 'No longer usable.' } } as const,
});

export const ApiKeyRef = builder.objectRef<ApiKey>('ApiKey').implement({
  description: 'An API key. The secret itself is shown once, when it is created.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    type: t.expose('type', { type: ApiKeyTypeEnum, description: 'Organisation or workspace key.' }),
    workspaceId: t.exposeID('workspaceId', { nullable: true, description: 'The workspace of a workspace key.' }),
    keyPrefix: t.exposeString('keyPrefix', { description: 'The first characters of the key, to recognise it.' }),
    status: t.expose('status', { type: ApiKeyStatusEnum, description: 'Active or revoked.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When it was revoked.' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true, description: 'Last use, at minute resolution.' }),
  }),
});

const CreatedApiKeyRef = builder.objectRef<CreatedApiKey>('CreatedApiKey').implement({
  description: 'A new API key with its secret, shown this once.',
  fields: (t) => ({
    key: t.exposeString('key', { description: 'The secret. Store it now: it cannot be shown again.' }),
    apiKey: t.field({ type: ApiKeyRef, description: 'The key record.', resolve: (created) => created.record }),
  }),
});

const ViewerRef = builder.objectRef<{ apiKeyId: string }>('Viewer').implement({
  description: 'The caller: its organisation, the workspaces it can act in, and its key.',
  fields: (t) => ({
    organisation: t.field({ type: OrganisationRef, description: "The caller's organisation.", resolve: (_v, _a, ctx) => tenancy.getOrganisation(ctx) }),
    workspaces: t.field({ type: [WorkspaceRef], description: 'Workspaces the caller can act in.', resolve: (_v, _a, ctx) => tenancy.listWorkspaces(ctx) }),
    apiKey: t.field({ type: ApiKeyRef, description: 'The key the caller used.', resolve: (v, _a, ctx) => tenancy.getApiKeyRecord(ctx, v.apiKeyId) }),
  }),
});

builder.queryFields((t) => ({
  viewer: t.field({
    type: ViewerRef,
    description: 'Who is calling.',
    resolve: (_root, _args, ctx) => ({ apiKeyId: ctx.principal.apiKeyId }),
  }),
  workspaces: t.field({
    type: [WorkspaceRef],
    description: 'Workspaces the caller can act in, oldest first.',
    resolve: (_root, _args, ctx) => tenancy.listWorkspaces(ctx),
  }),
  workspace: t.field({
    type: WorkspaceRef,
    description: 'One workspace by id or slug.',
    args: { idOrSlug: t.arg.string({ required: true, description: 'UUID or slug.' }) },
    resolve: (_root, args, ctx) => tenancy.getWorkspace(ctx, args.idOrSlug),
  }),
  apiKeys: t.field({
    type: [ApiKeyRef],
    description: 'API keys the caller can manage, oldest first.',
    resolve: (_root, _args, ctx) => tenancy.listApiKeys(ctx),
  }),
}));

const CreateWorkspaceInput = contractInputType('CreateWorkspaceInput', 'A new workspace.', contract.createWorkspaceContract);
const CreateApiKeyInput = contractInputType('CreateApiKeyInput', 'A new API key.', contract.createApiKeyContract);

builder.mutationFields((t) => ({
  createWorkspace: t.field({
    type: WorkspaceRef,
    description: 'Creates a workspace (organisation keys only).',
    authScopes: { organisationKey: true },
    args: { input: t.arg({ type: CreateWorkspaceInput, required: true, description: 'The workspace.' }) },
    resolve: (_root, { input }, ctx) => tenancy.createWorkspace(ctx, parseInput(contract.createWorkspaceContract, input)),
  }),
  createApiKey: t.field({
    type: CreatedApiKeyRef,
    description: 'Creates an API key and returns its secret once.',
    args: { input: t.arg({ type: CreateApiKeyInput, required: true, description: 'The key.' }) },
    resolve: (_root, { input }, ctx) => tenancy.createApiKey(ctx, parseInput(contract.createApiKeyContract, input)),
  }),
  revokeApiKey: t.field({
    type: ApiKeyRef,
    description: 'Revokes an API key; it is refused from then on (other processes: within the key cache TTL).',
    args: { id: t.arg.id({ required: true, description: 'The key id.' }) },
    resolve: (_root, args, ctx) => tenancy.revokeApiKey(ctx, String(args.id)),
  }),
}));

const WorkspaceEventRef = builder.objectRef<{ type: string; workspaceId: string }>('WorkspaceEvent').implement({
  description: 'Something happened to a workspace of the organisation.',
  fields: (t) => ({
    type: t.exposeString('type', { description: 'What happened: created.' }),
    workspace: t.field({
      type: WorkspaceRef,
      description: 'The workspace, as it is now.',
      resolve: (event, _args, ctx) => tenancy.getWorkspace(ctx, event.workspaceId),
    }),
  }),
});

builder.subscriptionFields((t) => ({
  workspaceEvents: t.field({
    type: WorkspaceEventRef,
    description: "Workspaces created in the caller's organisation, live (organisation keys only).",
    authScopes: { organisationKey: true },
    subscribe: (_root, _args, ctx) =>
      ctx.runtime.pubsub.subscribe<{ type: string; workspaceId: string }>(
        `workspaceEvents:${ctx.principal.organisationId}`,
        ctx.runtime.shutdown,
      ),
    resolve: (event) => event,
  }),
}));
