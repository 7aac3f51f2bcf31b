import * as tenancy from '../modules/tenancy/tenancy.service.js';
import type { Command } from './args.js';
import { isoOrNull, table } from './format.js';

/** Workspaces and API keys. */
export const tenancyCommands: Command[] = [
  {
    name: 'workspaces list',
    summary: 'List the workspaces.',
    options: {},
    async run(ctx) {
      const list = (await tenancy.listWorkspaces(ctx)).map(workspaceJson);
      return { json: list, text: list.map((w) => `${w.id}  ${w.slug}  ${w.name}${w.is_default ? '  (default)' : ''}`).join('\n') };
    },
  },
  {
    name: 'workspaces create',
    summary: 'Create a workspace.',
    options: {
      name: { type: 'string', description: 'display name', required: true },
      slug: { type: 'string', description: 'slug (default: from the name)' },
      description: { type: 'string', value: 'TEXT', description: 'description' },
    },
    async run(ctx, values) {
      const workspace = workspaceJson(await tenancy.createWorkspace(ctx, { name: values.name as string, slug: values.slug as string | undefined, description: values.description as string | undefined }));
      return { json: workspace, text: `Created workspace ${workspace.slug} (${workspace.id}).` };
    },
  },
  {
    name: 'keys list',
    summary: 'List the API keys (never their secrets).',
    options: {},
    async run(ctx) {
      const list = (await tenancy.listApiKeys(ctx)).map(keyJson);
      return { json: list, text: table(['ID', 'TYPE', 'STATUS', 'PREFIX', 'NAME'], list.map((k) => [k.id, k.type, k.status, `${k.key_prefix}…`, k.name])) };
    },
  },
  {
    name: 'keys create',
    summary: 'Create an API key; its secret is printed once.',
    options: {
      name: { type: 'string', description: 'display name', required: true },
      type: { type: 'string', description: 'an organisation key acts in every workspace, a workspace key in one; default: organisation', choices: ['organisation', 'workspace'] },
      workspace: { type: 'string', value: 'ID_OR_SLUG', description: "a workspace key's workspace" },
    },
    async run(ctx, values) {
      const type = (values.type as 'organisation' | 'workspace' | undefined) ?? 'organisation';
      const created = await tenancy.createApiKey(ctx, { name: values.name as string, type, workspace_id: values.workspace as string | undefined });
      return { json: { ...keyJson(created.record), key: created.key }, text: `Created ${type} key ${created.record.id}. The key (shown only this once):\n${created.key}` };
    },
  },
  {
    name: 'keys revoke',
    summary: 'Revoke an API key: it is refused from then on.',
    args: ['KEY_ID'],
    options: {},
    async run(ctx, _values, [id]) {
      const record = keyJson(await tenancy.revokeApiKey(ctx, id));
      return { json: record, text: `Revoked key ${record.id}.` };
    },
  },
];

function workspaceJson(w: { id: string; slug: string; name: string; description?: string | null; isDefault: boolean; createdAt: Date }) {
  return { id: w.id, slug: w.slug, name: w.name, description: w.description ?? null, is_default: w.isDefault, created_at: w.createdAt.toISOString() };
}

function keyJson(k: { id: string; name: string; type: string; workspaceId?: string | null; keyPrefix: string; status: string; createdAt: Date; revokedAt?: Date | null; lastUsedAt?: Date | null }) {
  return {
    id: k.id,
    name: k.name,
    type: k.type,
    workspace_id: k.workspaceId ?? null,
    key_prefix: k.keyPrefix,
    status: k.status,
    created_at: k.createdAt.toISOString(),
    revoked_at: isoOrNull(k.revokedAt),
    last_used_at: isoOrNull(k.lastUsedAt),
  };
}
