// Integrations, providers, guardrails and policies as readable lists with their settings.
// Guardrails and policies list everything the key can see; providers are read per workspace.
import { gql } from '../api.js';
import { badge, clear, fmt, h, section, table } from '../dom.js';

const INTEGRATIONS = `{ integrations(pageSize: 1000) { data {
  id slug name aiProviderId status maskedKey description createdAt
  configurations { baseUrl defaultModel prices }
  globalWorkspaceAccess { enabled usageLimits { type creditLimit alertThreshold periodicReset } rateLimits { unit value } }
  workspaces { workspaces { workspaceId enabled inheritsGlobal usageLimits { type creditLimit alertThreshold periodicReset } rateLimits { unit value } } }
} } }`;
const PROVIDERS = `query($w: String) { providers(workspaceId: $w, pageSize: 1000) { data { id slug name note status workspaceId inputGuardrails outputGuardrails integration { slug name } } } }`;
// Without a workspace the list holds every guardrail the key can see, organisation-wide ones included.
const GUARDRAILS = `{ guardrails(pageSize: 1000) { data {
  id slug name status version workspaceId updatedAt
  checks { id name isEnabled parameters }
  actions { deny async onSuccess { feedback { value weight } } onFail { feedback { value weight } } }
} } }`;
const POLICIES = `{ usageLimitsPolicies(pageSize: 1000) { data {
  id name type status creditLimit alertThreshold periodicReset nextUsageResetAt workspaceId conditions { key value } groupBy { key }
} } }`;


const limits = (usage, rate) =>
  [
    ...(usage ?? []).map((u) => `${fmt.amount(u.creditLimit, u.type)}${u.periodicReset ? ` per ${u.periodicReset.replace(/ly$/, '')}` : ''}${u.alertThreshold !== null ? ` (alert at ${fmt.amount(u.alertThreshold, u.type)})` : ''}`),
    ...(rate ?? []).map((r) => `${r.value} requests ${r.unit}`),
  ].join('; ') || 'no limits';

export async function integrationsView(root, ctx) {
  const rows = (await gql(INTEGRATIONS)).integrations.data;
  clear(
    root,
    section(
      'Integrations',
      table(
        [
          ['slug', (i) => h('span', { class: 'mono' }, i.slug)],
          ['name', (i) => i.name],
          ['provider', (i) => i.aiProviderId],
          ['key', (i) => i.maskedKey ?? '—'],
          ['base URL', (i) => i.configurations.baseUrl ?? 'provider default'],
          ['default model', (i) => i.configurations.defaultModel ?? '—'],
          ['prices', (i) => (i.configurations.prices ? fmt.json(i.configurations.prices) : 'shipped table')],
          ['global access', (i) => (i.globalWorkspaceAccess ? `${i.globalWorkspaceAccess.enabled ? 'enabled' : 'disabled'}, ${limits(i.globalWorkspaceAccess.usageLimits, i.globalWorkspaceAccess.rateLimits)}` : 'none')],
          [
            'workspaces',
            (i) =>
              h(
                'ul',
                {},
                i.workspaces.workspaces.map((a) => h('li', {}, `${ctx.workspaceName(a.workspaceId)}: `, badge(a.enabled ? 'enabled' : 'disabled'), ` ${limits(a.usageLimits, a.rateLimits)}${a.inheritsGlobal ? ' (global)' : ''}`)),
              ),
          ],
        ],
        rows,
        { testid: 'integrations' },
      ),
    ),
  );
}

export async function providersView(root, ctx) {
  const pages = await Promise.all(ctx.workspaces.map((w) => gql(PROVIDERS, { w: w.id })));
  const rows = pages.flatMap((p) => p.providers.data);
  clear(
    root,
    section(
      'Providers (virtual keys)',
      table(
        [
          ['virtual key', (p) => h('span', { class: 'mono' }, p.slug)],
          ['name', (p) => p.name],
          ['workspace', (p) => ctx.workspaceName(p.workspaceId)],
          ['integration', (p) => `${p.integration.name} (${p.integration.slug})`],
          ['input guardrails', (p) => p.inputGuardrails.join(', ') || '—'],
          ['output guardrails', (p) => p.outputGuardrails.join(', ') || '—'],
          ['note', (p) => p.note ?? ''],
        ],
        rows,
        { testid: 'providers' },
      ),
    ),
  );
}

export async function guardrailsView(root, ctx) {
  const rows = (await gql(GUARDRAILS)).guardrails.data;
  const action = (a) => [a.deny ? 'deny' : 'record only', a.async ? 'async' : null, `feedback ${a.onSuccess.feedback.value}/${a.onFail.feedback.value}`].filter(Boolean).join(', ');
  clear(
    root,
    section(
      'Guardrails',
      table(
        [
          ['name', (g) => g.name],
          ['slug', (g) => h('span', { class: 'mono' }, g.slug)],
          ['scope', (g) => (g.workspaceId ? ctx.workspaceName(g.workspaceId) : 'organisation')],
          ['version', (g) => g.version],
          ['checks', (g) => h('ul', {}, g.checks.map((c) => h('li', {}, h('strong', {}, c.id), c.isEnabled ? '' : ' (disabled)', fmt.json(c.parameters))))],
          ['actions', (g) => action(g.actions)],
          ['updated', (g) => fmt.date(g.updatedAt)],
        ],
        rows,
        { testid: 'guardrails' },
      ),
    ),
  );
}

export async function policiesView(root, ctx) {
  const rows = (await gql(POLICIES)).usageLimitsPolicies.data;
  clear(
    root,
    section(
      'Usage-limit policies',
      table(
        [
          ['name', (p) => p.name],
          ['workspace', (p) => ctx.workspaceName(p.workspaceId)],
          ['limit', (p) => fmt.amount(p.creditLimit, p.type)],
          ['alert at', (p) => (p.alertThreshold === null ? '—' : fmt.amount(p.alertThreshold, p.type))],
          ['reset', (p) => (p.periodicReset ? `${p.periodicReset}, next ${fmt.date(p.nextUsageResetAt)}` : 'never')],
          ['conditions', (p) => p.conditions.map((c) => `${c.key} = ${c.value}`).join(', ')],
          ['group by', (p) => p.groupBy.map((g) => g.key).join(', ') || '—'],
        ],
        rows,
        { testid: 'policies' },
      ),
    ),
  );
}
