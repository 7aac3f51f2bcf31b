// The request log: a filterable table, newest first, a page at a time (cursor `after`); a row
// opens the request's details — status, tokens, cost, latency, guardrail verdicts, refusal.
import { gql } from '../api.js';
import { badge, clear, details, errorBox, fmt, h, section, table } from '../dom.js';

const FIELDS = 'id createdAt workspaceId apiKeyId virtualKey provider model route status stream promptTokens completionTokens totalTokens cost totalMs upstreamMs requestId runId metadata guardrails refusal';
const LOGS = `query($workspaceId: String, $model: String, $status: Int, $virtualKey: String, $apiKeyId: String, $after: String, $limit: Int) {
  requestLogs(workspaceId: $workspaceId, model: $model, status: $status, virtualKey: $virtualKey, apiKeyId: $apiKeyId, after: $after, limit: $limit) {
    data { ${FIELDS} } hasMore lastId
  }
}`;
const PAGE = 20;

export async function logsView(root, ctx, signal) {
  const filters = {};
  const cursors = []; // the `after` of each page shown before this one
  let after = null;
  const out = h('div', {});
  const detail = h('div', { class: 'detail-pane' });
  const input = (name, label, type = 'text') => h('label', {}, `${label} `, h('input', { name, type, onchange: (e) => ((filters[name] = e.target.value.trim()), firstPage()) }));
  clear(
    root,
    h(
      'form',
      { class: 'toolbar', onsubmit: (e) => (e.preventDefault(), firstPage()) },
      h(
        'label',
        {},
        'workspace ',
        h('select', { name: 'workspaceId', onchange: (e) => ((filters.workspaceId = e.target.value), firstPage()) }, h('option', { value: '' }, 'all'), ctx.workspaces.map((w) => h('option', { value: w.id }, w.slug))),
      ),
      input('model', 'model'),
      input('status', 'status', 'number'),
      input('virtualKey', 'virtual key'),
      input('apiKeyId', 'API key id'),
      h('button', { type: 'submit' }, 'Filter'),
    ),
    h('div', { class: 'split' }, out, detail),
  );

  function firstPage() {
    cursors.length = 0;
    after = null;
    load().catch(show);
  }
  const show = (error) => !signal.aborted && clear(out, errorBox(error));

  async function load() {
    const variables = { limit: PAGE, after };
    for (const [k, v] of Object.entries(filters)) if (v) variables[k] = k === 'status' ? Number(v) : v;
    const page = (await gql(LOGS, variables)).requestLogs;
    if (signal.aborted) return;
    clear(
      out,
      table(
        [
          ['time', (r) => fmt.time(r.createdAt)],
          ['status', (r) => badge(String(r.status), r.status >= 400 ? 'error' : 'ok')],
          ['route', (r) => r.route],
          ['workspace', (r) => ctx.workspaceName(r.workspaceId)],
          ['virtual key', (r) => r.virtualKey ?? '—'],
          ['model', (r) => r.model ?? '—'],
          ['tokens', (r) => fmt.int(r.totalTokens)],
          ['cost', (r) => fmt.dollars(r.cost)],
          ['latency', (r) => fmt.ms(r.totalMs)],
          ['refusal', (r) => r.refusal ?? ''],
        ],
        page.data,
        { onRow: (r) => clear(detail, requestDetails(r, ctx)), rowClass: (r) => (r.status >= 400 ? 'failed' : ''), testid: 'request-log' },
      ),
      h(
        'div',
        { class: 'pager' },
        h('button', { type: 'button', disabled: cursors.length === 0, onclick: () => ((after = cursors.pop()), load().catch(show)) }, '← Newer'),
        h('button', { type: 'button', disabled: !page.hasMore, onclick: () => (cursors.push(after), (after = page.lastId), load().catch(show)) }, 'Older →'),
      ),
    );
  }
  await load();
}

function requestDetails(r, ctx) {
  return section(
    `Request ${r.id}`,
    details([
      ['status', badge(String(r.status), r.status >= 400 ? 'error' : 'ok')],
      ['refusal reason', r.refusal ?? 'none'],
      ['time', fmt.date(r.createdAt)],
      ['route', `${r.route}${r.stream ? ' (stream)' : ''}`],
      ['workspace', ctx.workspaceName(r.workspaceId)],
      ['API key', r.apiKeyId],
      ['virtual key / provider', `${r.virtualKey ?? '—'} / ${r.provider ?? '—'}`],
      ['model', r.model],
      ['tokens', `${fmt.int(r.promptTokens)} prompt + ${fmt.int(r.completionTokens)} completion = ${fmt.int(r.totalTokens)}`],
      ['cost', fmt.dollars(r.cost)],
      ['latency', `${fmt.ms(r.totalMs)} total, ${fmt.ms(r.upstreamMs)} upstream`],
      ['request id', r.requestId],
      ['run', r.runId],
      ['guardrails', r.guardrails.length ? h('ul', { 'data-testid': 'guardrail-verdicts' }, r.guardrails.map((g) => h('li', {}, `${g.stage}: ${g.slug ?? g.id} → `, badge(g.verdict ? 'pass' : 'fail', g.verdict ? 'ok' : 'error'), g.deny ? ' (deny)' : ''))) : 'none'],
      ['metadata', Object.keys(r.metadata).length ? fmt.json(r.metadata) : 'none'],
    ]),
  );
}
