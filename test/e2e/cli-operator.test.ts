/**
 * The CLI's operator commands (integrations, policies, usage) and its command-line handling:
 * --help per command, and every mistake in the command line answered with one line on stderr and
 * exit status 2. In-process through runCli (cli-bin.test.ts proves the real entry points).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands, runCli } from '../../src/cli/commands.js';
import { requestLogWriter } from '../../src/modules/request-log/request-log.writer.js';
import { testEnv } from '../helpers/database.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-operator-'));
const env = { DATABASE_URL: `sqlite:${join(dir, 'cli.sqlite')}`, LOG_LEVEL: 'silent', GATEWAY_BOOTSTRAP_API_KEY: 'cli-operator-key-0123456789' };

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, await testEnv(env), (line) => out.push(line), (line) => err.push(line));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function json(...args: string[]): Promise<any> {
  const r = await cli(...args, '--json');
  expect(r.code, `${args.join(' ')}: ${r.out} ${r.err}`).toBe(0);
  return JSON.parse(r.out);
}

let t: TestApp;
let policyId: string;
let teamId: string;
beforeAll(async () => {
  // A server on the same database file: the data the CLI reads is made through the API.
  t = await createTestApp(env);
  const team = await t.request('POST', '/v1/admin/workspaces', { body: { name: 'Team CLI', slug: 'team-cli' } });
  teamId = team.body.id;
  const access = await t.request('PUT', '/v1/integrations/local/workspaces', {
    body: { workspaces: [{ id: 'team-cli', enabled: false }, { id: 'default', enabled: true, usage_limits: [{ type: 'tokens', credit_limit: 100000 }], rate_limits: [{ unit: 'rpm', value: 600 }] }] },
  });
  expect(access.status, access.text).toBe(200);
  const policy = await t.request('POST', '/v1/policies/usage-limits', {
    body: { name: 'Token cap', conditions: [{ key: 'workspace_id', value: 'default' }], group_by: [{ key: 'model' }], type: 'tokens', credit_limit: 50000, periodic_reset: 'monthly' },
  });
  expect(policy.status, policy.text).toBe(200);
  policyId = policy.body.id;
  for (const content of ['one', 'two', 'three']) {
    const r = await t.request('POST', '/v1/chat/completions', { body: { model: '@local/local', messages: [{ role: 'user', content }] } });
    expect(r.status, r.text).toBe(200);
  }
  await requestLogWriter(t.app.runtime).flush();
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('integrations', () => {
  it('lists the integrations, and shows one with each workspace access, its limits and usage', async () => {
    const list = await json('integrations', 'list');
    expect(list.map((i: { slug: string }) => i.slug)).toEqual(['local']);
    expect(list[0]).toMatchObject({ slug: 'local', ai_provider_id: 'local', status: 'active' });
    expect(await json('integrations', 'list', '--workspace', 'team-cli')).toEqual([]);

    const shown = await json('integrations', 'show', 'local');
    const byWorkspace = Object.fromEntries(shown.workspaces.map((w: { workspace_slug: string }) => [w.workspace_slug, w]));
    expect(byWorkspace['team-cli']).toMatchObject({ workspace_id: teamId, enabled: false, usage_limit: null, rate_limit: null, usage: null });
    expect(byWorkspace.default).toMatchObject({
      enabled: true,
      usage_limit: { type: 'tokens', credit_limit: 100000 },
      rate_limit: { unit: 'rpm', value: 600 },
      usage: { status: 'active', current_usage: expect.any(Number) },
    });
    expect(byWorkspace.default.usage.current_usage).toBeGreaterThan(0);

    const text = await cli('integrations', 'show', 'local');
    expect(text.out).toMatch(/^WORKSPACE +ACCESS +USAGE LIMIT +RATE LIMIT$/m);
    expect(text.out).toMatch(new RegExp(`^default +enabled +tokens ${byWorkspace.default.usage.current_usage} / 100000 \\(\\d+%\\) +600 rpm$`, 'm'));
    expect(text.out).toMatch(/^team-cli +disabled +- +-$/m);
  });

  it('says when an integration does not exist', async () => {
    const r = await cli('integrations', 'show', 'nope');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^Error: .*nope/);
    // With --json the failure is JSON too, on stdout.
    const asJson = await cli('integrations', 'show', 'nope', '--json');
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.out)).toEqual({ error: { message: r.out.replace(/^Error: /, '') } });
  });
});

describe('policies', () => {
  it('lists policies and shows one with its usage per value key; archive moves it to the archived list', async () => {
    const list = await json('policies', 'list');
    expect(list).toEqual([expect.objectContaining({ id: policyId, name: 'Token cap', type: 'tokens', credit_limit: 50000, periodic_reset: 'monthly', status: 'active' })]);
    expect(await json('policies', 'list', '--workspace', 'team-cli')).toEqual([]);

    const shown = await json('policies', 'show', policyId);
    expect(shown).toMatchObject({ id: policyId, conditions: [{ key: 'workspace_id', value: expect.any(String) }], group_by: [{ key: 'model' }], next_reset_at: expect.any(String) });
    expect(shown.usage).toEqual([expect.objectContaining({ value_key: expect.stringContaining('local'), current_usage: expect.any(Number), status: 'active' })]);
    expect(shown.usage[0].current_usage).toBeGreaterThan(0);
    const text = await cli('policies', 'show', policyId);
    expect(text.out).toContain('counted per model');
    expect(text.out).toMatch(new RegExp(`${shown.usage[0].current_usage} / 50000 \\(\\d+%\\) +active$`, 'm'));

    expect((await cli('policies', 'archive', policyId)).out).toBe(`Archived policy ${policyId}.`);
    expect(await json('policies', 'list')).toEqual([]);
    expect((await json('policies', 'list', '--status', 'archived')).map((p: { id: string }) => p.id)).toEqual([policyId]);
  });
});

describe('usage', () => {
  it('sums the request log per day, per workspace and model, since a relative or absolute time', async () => {
    const [day] = await json('usage', '--since', '1d');
    expect(day).toMatchObject({ day: new Date().toISOString().slice(0, 10), requests: 3, errors: 0 });
    expect(day.total_tokens).toBe(day.prompt_tokens + day.completion_tokens);
    expect(day.total_tokens).toBeGreaterThan(0);

    const grouped = await json('usage', '--workspace', 'default', '--since', new Date(Date.now() - 3_600_000).toISOString(), '--group-by', 'workspace,model');
    expect(grouped).toEqual([expect.objectContaining({ workspace: expect.any(String), model: 'local', requests: 3 })]);
    // Nothing in another workspace, nothing in the future.
    expect(await json('usage', '--workspace', 'team-cli', '--since', '1d')).toEqual([]);
    expect(await json('usage', '--since', String(Math.floor(Date.now() / 1000) + 3600))).toEqual([]);

    const text = await cli('usage', '--since', '1d', '--group-by', 'workspace');
    expect(text.out).toMatch(/^WORKSPACE +REQUESTS +ERRORS +PROMPT +COMPLETION +TOTAL +COST \$$/m);
    expect(text.out).toMatch(/^default +3 +0 /m);
  });

  it('refuses a group it does not know and a time it cannot read', async () => {
    expect(await cli('usage', '--group-by', 'day,colour')).toEqual({ code: 2, out: '', err: "Invalid value for --group-by: 'colour' (expected day, hour, workspace, api_key, virtual_key, model). Run 'gatehouse usage --help'." });
    const bad = await cli('usage', '--since', 'last tuesday');
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/^Error: .*from/);
  });
});

describe('the command line', () => {
  it('answers --help for every command with its usage and options', async () => {
    for (const command of commands) {
      const r = await cli(...command.name.split(' '), '--help');
      expect(r.code, command.name).toBe(0);
      expect(r.out.startsWith(`Usage: ${['gatehouse', command.name, ...(command.args ?? [])].join(' ')} `), r.out).toBe(true);
      expect(r.out).toContain(command.summary);
      for (const option of [...Object.keys(command.options), 'json', 'help']) expect(r.out, `${command.name} --${option}`).toMatch(new RegExp(`^  --${option}\\b`, 'm'));
    }
    const group = await cli('policies', '--help');
    expect(group.code).toBe(0);
    expect(group.out).toContain('policies show');
    expect((await cli('--help')).out).toMatch(/^Usage: gatehouse <command> \[options\]/);
  });

  it('answers every mistake with one line on stderr and exit status 2', async () => {
    const cases: Array<[string[], string]> = [
      [['keys', 'list', '--bogus'], "Unknown option '--bogus'. Run 'gatehouse keys list --help'."],
      [['usage', '-x'], "Unknown option '-x'. Run 'gatehouse usage --help'."],
      [['usage', '--since'], "Option '--since' needs a value. Run 'gatehouse usage --help'."],
      [['keys', 'list', '--json=yes'], "Option '--json' takes no value. Run 'gatehouse keys list --help'."],
      [['keys', 'create'], "'gatehouse keys create' needs --name. Run 'gatehouse keys create --help'."],
      [['keys', 'create', '--name', 'x', '--type', 'admin'], "Invalid value for --type: 'admin' (expected organisation, workspace). Run 'gatehouse keys create --help'."],
      [['keys', 'revoke'], "'gatehouse keys revoke' needs KEY_ID. Run 'gatehouse keys revoke --help'."],
      [['policies', 'show', 'a', 'b'], "Unexpected argument 'b' for 'gatehouse policies show'. Run 'gatehouse policies show --help'."],
      [['keys', 'bogus'], "Unknown command: keys bogus. Run 'gatehouse keys --help' for the commands."],
      [['bogus'], "Unknown command: bogus. Run 'gatehouse --help' for the commands."],
      [['--bogus'], "Unknown option '--bogus'. Run 'gatehouse --help' for the commands."],
    ];
    for (const [args, message] of cases) expect(await cli(...args), args.join(' ')).toEqual({ code: 2, out: '', err: message });
  });

  it('without a command, or with only a group, shows the help on stderr with exit status 2', async () => {
    const none = await cli();
    expect(none).toMatchObject({ code: 2, out: '' });
    expect(none.err).toMatch(/^Usage: gatehouse <command>/);
    const group = await cli('integrations');
    expect(group).toMatchObject({ code: 2, out: '' });
    expect(group.err).toContain('integrations list');
  });
});
