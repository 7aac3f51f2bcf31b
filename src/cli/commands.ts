import type { Principal } from '../auth/principal.js';
import { Scope } from '../auth/tenancy.js';
import { loadConfig } from '../config.js';
import { domainModules } from '../modules/index.js';
import { bootstrap } from '../modules/tenancy/bootstrap.js';
import { OrganisationSchema } from '../modules/tenancy/organisation.entity.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { parseCommandLine, UsageError, usageLine, type Command } from './args.js';
import { integrationsCommands } from './integrations.js';
import { policiesCommands } from './policies.js';
import { tenancyCommands } from './tenancy.js';
import { usageCommands } from './usage.js';

/**
 * Operator commands on the database in DATABASE_URL (the server may be running: SQLite in WAL mode
 * with a busy timeout lets both write). They act as the organisation itself, so they can create the
 * first keys of a fresh install.
 */
export const commands: Command[] = [...tenancyCommands, ...integrationsCommands, ...policiesCommands, ...usageCommands];

const USAGE = `Usage: gatehouse <command> [options]

Commands:
${commands.map((c) => `  ${usageLine(c)}\n      ${c.summary}`).join('\n')}

Every command takes --json (print JSON instead of text) and --help (its options).
The database is the one in DATABASE_URL (default: sqlite:./data/gatehouse.sqlite).`;

/**
 * `out` gets the command's output (stdout: text, or JSON with --json); `notice` gets what is said
 * beside it (stderr): the first key of a brand-new database, and mistakes in the command line (one
 * line, exit status 2). A command that fails says why on `out` (as JSON with --json), exit status 1.
 */
export async function runCli(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  out: (line: string) => void = console.log,
  notice: (line: string) => void = console.error,
): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(commands, argv, USAGE);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    notice(error.message);
    return 2;
  }
  if (parsed.kind === 'help') {
    (parsed.status === 0 ? out : notice)(parsed.text);
    return parsed.status;
  }
  const { command, values, args } = parsed;
  const loaded = loadConfig({ ...env, LOG_LEVEL: env.LOG_LEVEL ?? 'warn' });
  if (!loaded.ok) {
    out(`Invalid configuration:\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}`);
    return 1;
  }
  let runtime: Runtime | undefined;
  try {
    runtime = await createRuntime(loaded.config, domainModules);
    const first = await bootstrap(runtime);
    if (first.generatedKey) notice(`Created the first organisation API key (shown only this once): ${first.generatedKey}`);
    const principal = await organisationPrincipal(runtime);
    const result = await command.run({ em: runtime.fork(), runtime, principal, scope: new Scope(principal) }, values, args);
    out(values.json ? JSON.stringify(result.json, null, 2) : result.text);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      notice(error.message);
      return 2;
    }
    const message = error instanceof Error ? error.message : String(error);
    out(values.json ? JSON.stringify({ error: { message } }) : `Error: ${message}`);
    return 1;
  } finally {
    await runtime?.close();
  }
}

/** The CLI acts as the organisation (the single one a self-hosted install has). */
async function organisationPrincipal(runtime: Runtime): Promise<Principal> {
  const organisation = (await runtime.fork().find(OrganisationSchema, {}, { orderBy: { createdAt: 'asc' }, limit: 1 }))[0];
  if (!organisation) throw new Error('The database has no organisation.');
  return { apiKeyId: 'cli', organisationId: organisation.id, type: 'organisation', workspaceId: null };
}
