import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLogWriter } from '../../src/modules/request-log/request-log.writer.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createWorkspaceWithKey } from '../helpers/tenants.js';
import { BETA, DATA_PLANE, ok, waitTerminal } from '../helpers/enforcement.js';

/**
 * The web console and GraphiQL in a real headless browser: Debian's chromium driven by
 * playwright-core (which never downloads a browser of its own). Every request the pages make to
 * another origin is refused and counted, so "works offline" is what the assertions see. One
 * screenshot per view goes to test-output/console/ (kept by CI as artifacts).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_BROWSER = existsSync(CHROMIUM);
const OUT = join(process.cwd(), 'test-output', 'console');
/** What the page shows settles after a fetch or a subscription event: wait for it, generously on a loaded machine. */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000 });
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

it('has a chromium to run the console test in (REQUIRE_BROWSER=1 makes its absence a failure)', (ctx) => {
  if (HAVE_BROWSER) return;
  const why = `no chromium at ${CHROMIUM}: install it with apt-get install chromium, or point CHROMIUM_PATH at one`;
  if (process.env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but ${why}.`);
  console.warn(`Skipping the console browser test: ${why}.`);
  ctx.skip();
});

// A browser under a loaded CI machine is slow: each step gets a minute rather than the default 30 s.
describe.skipIf(!HAVE_BROWSER)('console in a headless chromium', { timeout: 60_000 }, () => {
  let t: TestApp;
  let base: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  const foreign: string[] = [];
  const pageErrors: string[] = [];
  let teamPolicy: string;
  let workspaceId: string;

  const chat = (content: string, model = '@local/local') => t.request('POST', '/v1/chat/completions', { body: { model, messages: [{ role: 'user', content }] } });
  const flushLog = () => requestLogWriter(t.app.runtime).flush();

  beforeAll(async () => {
    t = await createTestApp();
    base = await t.listen();
    workspaceId = (await t.graphql('{ viewer { workspaces { id } } }')).data.viewer.workspaces[0].id;
    // What the views will show: two policies (one to be used up), a usage limit on workspace
    // access, a denying guardrail on a second provider, and chat traffic through both.
    teamPolicy = (
      await ok(t, 'POST', '/v1/policies/usage-limits', {
        name: 'Team budget',
        conditions: [{ key: 'workspace_id', value: '*' }],
        group_by: [{ key: 'api_key' }],
        type: 'tokens',
        credit_limit: 5000,
        alert_threshold: 4000,
        periodic_reset: 'monthly',
      })
    ).id;
    const tinyPolicy = (await ok(t, 'POST', '/v1/policies/usage-limits', { name: 'Tiny model cap', conditions: [{ key: 'model', value: 'tiny-model' }], group_by: [{ key: 'api_key' }], type: 'tokens', credit_limit: 5 })).id;
    await ok(t, 'PUT', '/v1/integrations/local/workspaces', { workspaces: [{ id: 'default', enabled: true, usage_limits: [{ type: 'tokens', credit_limit: 100000, alert_threshold: 80000, periodic_reset: 'weekly' }] }] });
    const deny = (await ok(t, 'POST', '/v1/guardrails', { name: 'No forbidden words', checks: [{ id: 'default.regexMatch', parameters: { rule: 'forbidden', not: true } }], actions: { deny: true } })).slug;
    await ok(t, 'POST', '/v1/providers', { integration_id: 'local', slug: 'guarded', name: 'Guarded local', input_guardrails: [deny] });
    for (const text of ['hello', 'how are you', 'tell me a story']) expect((await chat(text)).status).toBe(200);
    expect((await chat('a forbidden word', '@guarded/local')).status).toBe(446);
    expect((await chat('small', '@local/tiny-model')).status).toBe(200);
    expect(Object.values((await ok(t, 'GET', `/v1/policies/usage-limits/${tinyPolicy}`)).value_key_usage_map)).toEqual([expect.objectContaining({ status: 'exhausted' })]);
    await flushLog();

    mkdirSync(OUT, { recursive: true });
    profile = mkdtempSync(join(tmpdir(), 'gatehouse-chromium-'));
    browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1280, height: 900 } });
    await browser.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${base}/`)) return route.continue();
      foreign.push(url);
      return route.abort('internetdisconnected');
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await t?.close();
  });

  async function openView(id: string): Promise<void> {
    await page.click(`nav a[data-view="${id}"]`);
    await page.waitForSelector(`main[data-view="${id}"][data-ready]`);
  }
  const shot = (name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
  const texts = (selector: string) => page.locator(selector).allTextContents();

  it('refuses a wrong key, then signs in with the right one kept in sessionStorage only', async () => {
    await page.goto(`${base}/console`);
    await page.fill('input[name=key]', 'gk_not_a_real_key_0000000000');
    await page.click('button[type=submit]');
    await poll(() => texts('form.signin .error')).toEqual([expect.stringMatching(/API key/i)]);
    await shot('sign-in');
    await page.fill('input[name=key]', t.key);
    await page.click('button[type=submit]');
    await page.waitForSelector('main[data-view="usage"][data-ready]');
    expect(await page.textContent('[data-testid=who]')).toContain('organisation key');
    const storage = await page.evaluate(() => ({ session: sessionStorage.getItem('gatehouse.apiKey'), local: localStorage.length }));
    expect(storage).toEqual({ session: t.key, local: 0 });
  });

  it('usage: a bar per bucket with the API’s numbers; a used-up bucket is highlighted; a bar grows after usage is spent', async () => {
    const used = async () => (await ok(t, 'GET', `/v1/policies/usage-limits/${teamPolicy}`)).value_key_usage_map;
    const before = Object.values(await used())[0] as { current_usage: number };
    const team = page.locator('[data-testid=policy][data-name="Team budget"] [data-testid=bucket]');
    await poll(() => team.getAttribute('data-used')).toBe(String(before.current_usage));
    expect(await team.getAttribute('data-limit')).toBe('5000');
    expect(await team.locator('[data-testid=bucket-amount]').textContent()).toBe(`${before.current_usage} tokens / 5,000 tokens`);
    expect(await team.locator('.threshold').count()).toBe(1);
    expect(await team.textContent()).toContain('resets monthly; next reset');

    const tiny = page.locator('[data-testid=policy][data-name="Tiny model cap"] [data-testid=bucket]');
    expect(await tiny.getAttribute('class')).toContain('exhausted');
    expect(await tiny.textContent()).toContain('exhausted');

    const access = (await t.graphql(`{ integrationWorkspaces(slug: "local") { workspaces { workspaceId usage { currentUsage periodKey nextResetAt } } } }`)).data.integrationWorkspaces.workspaces;
    const usage = access.find((a: any) => a.workspaceId === workspaceId).usage;
    const accessBar = page.locator('[data-testid=access][data-name="local/default"] [data-testid=bucket]');
    expect(await accessBar.getAttribute('data-used')).toBe(String(usage.currentUsage));
    // The console prints dates as `YYYY-MM-DD HH:MM:SS UTC`.
    expect(usage.nextResetAt).not.toBeNull();
    const nextReset = usage.nextResetAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
    expect(await accessBar.textContent()).toContain(`period ${usage.periodKey}; resets weekly; next reset ${nextReset}`);
    await shot('usage');

    expect((await chat('spend a little more of the budget')).status).toBe(200);
    const after = Object.values(await used())[0] as { current_usage: number };
    expect(after.current_usage).toBeGreaterThan(before.current_usage);
    await page.click('text=Refresh');
    await poll(() => team.getAttribute('data-used')).toBe(String(after.current_usage));
    await shot('usage-after-spend');
  });

  it('spend: the chart and totals are usageSummary’s, split by model, then by workspace', async () => {
    await flushLog();
    await openView('spend');
    const summary = (await t.graphql('{ usageSummary(groupBy: [model]) { model totalTokens requests } }')).data.usageSummary as Array<{ model: string; totalTokens: number; requests: number }>;
    const drawn = await page.locator('[data-testid=spend-chart] rect').evaluateAll((rects) => rects.map((r) => [r.getAttribute('data-series'), Number(r.getAttribute('data-value'))]));
    const perModel = new Map<string, number>();
    for (const [series, value] of drawn as Array<[string, number]>) perModel.set(series, (perModel.get(series) ?? 0) + value);
    expect(Object.fromEntries(perModel)).toEqual(Object.fromEntries(summary.map((s) => [s.model, s.totalTokens])));
    const local = summary.find((s) => s.model === 'local')!;
    expect(await texts('[data-testid=spend-totals] tbody tr')).toContainEqual(expect.stringContaining(`local${local.requests}`));
    await shot('spend');
    const series = () => page.locator('[data-testid=spend-chart] rect').evaluateAll((rects) => [...new Set(rects.map((r) => r.getAttribute('data-series')))]);
    await page.selectOption('select[name=split]', 'workspace');
    await poll(series).toEqual(['default']);
    const bootstrapKey = (await t.graphql('{ viewer { apiKey { id name } } }')).data.viewer.apiKey;
    await page.selectOption('select[name=split]', 'api_key');
    await poll(series).toEqual([`${bootstrapKey.name} (${bootstrapKey.id.slice(0, 8)})`]);
  });

  it('request log: the API’s records, filterable and paged; a row opens its details', async () => {
    for (let i = 0; i < 20; i++) expect((await chat(`question ${i}`)).status).toBe(200);
    await flushLog();
    await openView('logs');
    const logs = (await ok(t, 'GET', '/v1/logs?limit=100')).data;
    expect(logs.length).toBeGreaterThan(20);
    const rows = page.locator('[data-testid=request-log] tbody tr');
    const shown = () => rows.evaluateAll((trs) => trs.map((tr) => tr.textContent));
    expect(await rows.count()).toBe(20);
    const firstPage = await shown();
    await page.click('text=Older →');
    await poll(() => rows.count()).toBe(logs.length - 20);
    await page.click('text=← Newer');
    await poll(shown).toEqual(firstPage);
    await page.fill('input[name=status]', '446');
    await page.press('input[name=status]', 'Enter');
    await poll(() => rows.count()).toBe(1);
    await page.locator('[data-testid=request-log] tbody tr.failed').first().click();
    const refused = logs.find((r: any) => r.status === 446);
    await poll(() => page.locator('.detail-pane').textContent()).toContain(`Request ${refused.id}`);
    const pane = (await page.locator('.detail-pane').textContent())!;
    expect(pane).toContain('refusal reasonguardrail');
    expect(pane).toContain(`${refused.usage?.prompt_tokens ?? refused.prompt_tokens} prompt`);
    expect(await texts('[data-testid=guardrail-verdicts] li')).toEqual([expect.stringMatching(/^input: guard_\w+ → fail \(deny\)$/)]);
    await shot('request-log');

    await page.fill('input[name=status]', '');
    await page.fill('input[name=model]', 'tiny-model');
    await page.press('input[name=model]', 'Enter');
    // The status filter left one row too, so wait for the rows themselves, not their count.
    await poll(shown).toEqual([expect.stringContaining('tiny-model')]);
  });

  it('runs: a new run appears, is followed live through its tool round, and shows its event timeline', async () => {
    await openView('runs');
    const assistant = await ok(t, 'POST', '/v1/assistants', { model: 'local', tools: [{ type: 'function', function: { name: 'get_weather' } }] }, BETA);
    const run = await ok(t, 'POST', '/v1/threads/runs', { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'get_weather for Paris' }] } }, DATA_PLANE);
    const waiting = await waitTerminal(t, run.thread_id, run.id, ['requires_action']);
    const row = page.locator('[data-testid=runs] tbody tr', { hasText: run.id });
    await poll(() => row.textContent()).toContain('requires_action');
    await poll(() => row.textContent()).toContain('live');
    await shot('runs-live');

    const call = waiting.required_action.submit_tool_outputs.tool_calls[0];
    await ok(t, 'POST', `/v1/threads/${run.thread_id}/runs/${run.id}/submit_tool_outputs`, { tool_outputs: [{ tool_call_id: call.id, output: '21 °C' }] }, DATA_PLANE);
    await poll(() => row.textContent()).toContain('completed');

    await row.click();
    const events = (await t.graphql(`query($t: String!, $r: String!) { run(threadId: $t, id: $r) { events(limit: 200) { event } } }`, { t: run.thread_id, r: run.id })).data.run.events.map((e: any) => e.event);
    await poll(() => page.locator('[data-testid=timeline] li').evaluateAll((items) => items.map((li) => li.getAttribute('data-event')))).toEqual(events);
    expect(events).toContain('thread.run.requires_action');
    expect(await page.locator('[data-testid=timeline] li[data-event="thread.run.requires_action"] .summary').textContent()).toBe('requires_action (tool calls: get_weather)');
    expect((await texts('[data-testid=timeline] li[data-event="thread.message.delta"] .summary')).join('')).toBe('Tool results: get_weather: 21 °C');
    await shot('runs');
  });

  it('integrations, providers, guardrails and policies: readable lists of what the API holds', async () => {
    const lists: Array<[string, string[]]> = [
      ['integrations', ['local', 'enabled', '100,000 tokens per week']],
      ['providers', ['guarded', 'Guarded local', 'local']],
      ['guardrails', ['No forbidden words', 'default.regexMatch', '"rule": "forbidden"', 'deny']],
      ['policies', ['Team budget', '5,000 tokens', 'monthly', 'Tiny model cap', 'model = tiny-model']],
    ];
    for (const [view, expected] of lists) {
      await openView(view);
      const text = await page.locator(`[data-testid=${view}]`).textContent();
      for (const piece of expected) expect(text, `${view} shows ${piece}`).toContain(piece);
      await shot(view);
    }
  });

  it('a workspace key sees its own workspace only; signing out forgets the key', async () => {
    const team = await createWorkspaceWithKey(t, 'Team B');
    await ok(t, 'POST', '/v1/policies/usage-limits', { name: 'Team B budget', workspace_id: team.workspaceId, conditions: [{ key: 'workspace_id', value: '*' }], group_by: [{ key: 'api_key' }], type: 'cost', credit_limit: 2 });
    const tab = await browser.newPage(); // a new tab: its sessionStorage starts empty
    await tab.goto(`${base}/console`);
    expect(await tab.locator('input[name=key]').count()).toBe(1);
    await tab.fill('input[name=key]', team.key);
    await tab.click('button[type=submit]');
    await tab.waitForSelector('main[data-view="usage"][data-ready]');
    expect(await tab.textContent('[data-testid=who]')).toContain('workspace key');
    expect(await tab.locator('[data-testid=policy]').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')))).toEqual(['Team B budget']);
    expect(await tab.locator('[data-testid=policy] [data-testid=bucket-amount]').textContent()).toBe('$0 / $2.00');
    await tab.screenshot({ path: join(OUT, 'usage-workspace-key.png'), fullPage: true });
    await tab.click('text=Sign out');
    await tab.waitForSelector('input[name=key]');
    expect(await tab.evaluate(() => sessionStorage.length)).toBe(0);
    await tab.close();
  });

  it('GraphiQL at /graphql renders its editor with nothing from the network', { timeout: 120_000 }, async () => {
    await page.goto(`${base}/graphql`);
    await page.waitForSelector('.graphiql-container .graphiql-query-editor', { timeout: 30_000 });
    await shot('graphiql');
  });

  it('asked for nothing outside the gateway and raised no script error', () => {
    expect(foreign).toEqual([]);
    // The wrong key's 401 is the one error the browser logs itself.
    expect(pageErrors.filter((e) => !e.includes('401'))).toEqual([]);
  });
});
