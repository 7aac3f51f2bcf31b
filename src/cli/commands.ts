import { parseArgs } from 'node:util';
import type { Principal } from '../auth/principal.js';
import { loadConfig } from '../config.js';
import { OrganisationSchema } from '../modules/tenancy/organisation.entity.js';
import { bootstrap } from '../modules/tenancy/bootstrap.js';
import * as tenancy from '../modules/tenancy/tenancy.service.js';
import { AppError } from '../errors.js';
import { Scope } from '../auth/tenancy.js';
import { domainModules } from '../modules/index.js';
import { createRuntime, type Runtime } from '../runtime.js';

/**
 * Operator commands on the database in DATABASE_URL (the server may be running: SQLite in WAL mode
 * with a busy timeout lets both write). They act as the organisation itself, so they can create the
 * first keys of a fresh install.
 */
const USAGE = `Usage: gatehouse <command> [options]

Commands:
  workspaces list                                   list workspaces
  workspaces create --name NAME [--slug S] [--description D]
  keys list                                         list API keys (never their secrets)
  keys create --name NAME [--type organisation|workspace] [--workspace ID_OR_SLUG]
  keys revoke ID                                    revoke an API key

Options:
  --json      print JSON instead of text
  --help      this text`;

/**
 * `out` gets the command's output (stdout: text, or JSON with --json); `notice` gets what is said
 * beside it (stderr), such as the first key of a brand-new database, so --json stays parseable.
 */
export async function runCli(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  out: (line: string) => void = console.log,
  notice: (line: string) => void = console.error,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      slug: { type: 'string' },
      description: { type: 'string' },
      type: { type: 'string', default: 'organisation' },
      workspace: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [noun, verb, arg] = positionals;
  if (values.help || !noun) {
    out(USAGE);
    return values.help ? 0 : 2;
  }
  const loaded = loadConfig({ ...env, LOG_LEVEL: env.LOG_LEVEL ?? 'warn' });
  if (!loaded.ok) {
    out(`Invalid configuration:\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}`);
    return 1;
  }
  const runtime = await createRuntime(loaded.config, domainModules);
  try {
    const first = await bootstrap(runtime);
    if (first.generatedKey) notice(`Created the first organisation API key (shown only this once): ${first.generatedKey}`);
    const principal = await organisationPrincipal(runtime);
    const ctx = { em: runtime.fork(), runtime, principal, scope: new Scope(principal) };
    const print = (value: unknown, text: () => string) => out(values.json ? JSON.stringify(value, null, 2) : text());
    const command = `${noun} ${verb ?? ''}`.trim();
    switch (command) {
      case 'workspaces list': {
        const list = (await tenancy.listWorkspaces(ctx)).map(workspaceJson);
        print(list, () => list.map((w) => `${w.id}  ${w.slug}  ${w.name}${w.is_default ? '  (default)' : ''}`).join('\n'));
        return 0;
      }
      case 'workspaces create': {
        const workspace = workspaceJson(await tenancy.createWorkspace(ctx, { name: values.name ?? '', slug: values.slug, description: values.description }));
        print(workspace, () => `Created workspace ${workspace.slug} (${workspace.id}).`);
        return 0;
      }
      case 'keys list': {
        const list = (await tenancy.listApiKeys(ctx)).map(keyJson);
        print(list, () => list.map((k) => `${k.id}  ${k.type.padEnd(12)} ${k.status.padEnd(8)} ${k.key_prefix}…  ${k.name}`).join('\n'));
        return 0;
      }
      case 'keys create': {
        const type = values.type === 'workspace' ? 'workspace' : values.type === 'organisation' ? 'organisation' : null;
        if (!type) throw new Error("--type must be 'organisation' or 'workspace'.");
        const created = await tenancy.createApiKey(ctx, { name: values.name ?? '', type, workspace_id: values.workspace });
        const body = { ...keyJson(created.record), key: created.key };
        print(body, () => `Created ${type} key ${created.record.id}. The key (shown only this once):\n${created.key}`);
        return 0;
      }
      case 'keys revoke': {
        if (!arg) throw new Error('keys revoke needs the key id.');
        const record = keyJson(await tenancy.revokeApiKey(ctx, arg));
        print(record, () => `Revoked key ${record.id}.`);
        return 0;
      }
      default:
        out(`Unknown command: ${command}\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    const message = error instanceof AppError || error instanceof Error ? error.message : String(error);
    out(values.json ? JSON.stringify({ error: { message } }) : `Error: ${message}`);
    return 1;
  } finally {
    await runtime.close();
  }
}

/** The CLI acts as the organisation (the single one a self-hosted install has). */
async function organisationPrincipal(runtime: Runtime): Promise<Principal> {
  const organisation = (await runtime.fork().find(OrganisationSchema, {}, { orderBy: { createdAt: 'asc' }, limit: 1 }))[0];
  if (!organisation) throw new Error('The database has no organisation.');
  return { apiKeyId: 'cli', organisationId: organisation.id, type: 'organisation', workspaceId: null };
}

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
    revoked_at: k.revokedAt?.toISOString() ?? null,
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
  };
}

