// Spend over time: tokens or cost per day or hour from GraphQL usageSummary, stacked by
// workspace, API key or model, drawn as an inline SVG bar chart with a totals table below.
import { gql } from '../api.js';
import { clear, errorBox, fmt, h, section, svg, table } from '../dom.js';

const SUMMARY = `query($groupBy: [UsageSummaryGroup!], $from: String) {
  usageSummary(groupBy: $groupBy, from: $from) { day hour workspaceId apiKeyId model requests errors promptTokens completionTokens totalTokens cost }
}`;

const SPLITS = { workspace: ['workspace', 'workspaceId'], api_key: ['API key', 'apiKeyId'], model: ['model', 'model'] };
const RANGES = { 1: 'last 24 hours', 7: 'last 7 days', 30: 'last 30 days' };
const COLOURS = ['#3b6fd8', '#e0823d', '#3fa36b', '#b84fc4', '#d8b43b', '#4fb8c4', '#c44f61', '#7a7a7a'];

export async function spendView(root, ctx, signal) {
  const state = { bucket: 'day', split: 'model', metric: 'totalTokens', days: '7' };
  const select = (name, options) =>
    h(
      'label',
      {},
      `${name} `,
      h(
        'select',
        { name, onchange: (e) => ((state[name] = e.target.value), redraw()) },
        Object.entries(options).map(([value, text]) => h('option', { value, selected: state[name] === value }, text)),
      ),
    );
  const out = h('div', {});
  clear(
    root,
    h(
      'div',
      { class: 'toolbar' },
      select('metric', { totalTokens: 'tokens', cost: 'cost (US$)' }),
      select('bucket', { day: 'per day', hour: 'per hour' }),
      select('split', Object.fromEntries(Object.entries(SPLITS).map(([k, [label]]) => [k, `by ${label}`]))),
      select('days', RANGES),
    ),
    out,
  );

  async function draw() {
    const from = new Date(Date.now() - Number(state.days) * 86_400_000).toISOString();
    const rows = (await gql(SUMMARY, { groupBy: [state.bucket, state.split], from })).usageSummary;
    if (signal.aborted) return;
    const field = SPLITS[state.split][1];
    const keys = state.split === 'api_key' ? await keyNames() : new Map();
    if (signal.aborted) return;
    const name = (row) => {
      const value = row[field];
      if (state.split === 'workspace') return ctx.workspaceName(value);
      if (state.split === 'api_key' && keys.has(value)) return `${keys.get(value)} (${value.slice(0, 8)})`;
      return value ?? '(none)';
    };
    clear(
      out,
      section(`${state.metric === 'cost' ? 'Cost' : 'Tokens'} ${state.bucket === 'day' ? 'per day' : 'per hour'}, by ${SPLITS[state.split][0]}`, chart(rows, state, name)),
      section('Totals', totals(rows, name)),
    );
  }
  const redraw = () => draw().catch((error) => !signal.aborted && clear(out, errorBox(error)));
  await draw();
}

/** API key names by id where the key may list keys; ids alone otherwise. */
async function keyNames() {
  try {
    return new Map((await gql('{ apiKeys { id name } }')).apiKeys.map((k) => [k.id, k.name]));
  } catch {
    return new Map();
  }
}

function chart(rows, state, name) {
  const times = [...new Set(rows.map((r) => r[state.bucket]))].sort();
  const series = [...new Set(rows.map(name))].sort();
  if (times.length === 0) return h('p', { class: 'empty', 'data-testid': 'chart-empty' }, 'No requests in this range.');
  const value = (r) => r[state.metric];
  const stackTotals = times.map((t) => rows.filter((r) => r[state.bucket] === t).reduce((sum, r) => sum + value(r), 0));
  const max = Math.max(...stackTotals) || 1;
  const width = 720;
  const height = 260;
  const left = 70;
  const bottom = 40;
  const plotH = height - bottom - 10;
  const slot = (width - left - 10) / times.length;
  const barW = Math.max(4, Math.min(48, slot * 0.7));
  const y = (v) => 10 + plotH - (v / max) * plotH;
  const label = (v) => (state.metric === 'cost' ? fmt.dollars(v) : fmt.int(v));
  const bars = times.flatMap((t, i) => {
    let base = 0;
    const x = left + i * slot + (slot - barW) / 2;
    return rows
      .filter((r) => r[state.bucket] === t)
      .sort((a, b) => series.indexOf(name(a)) - series.indexOf(name(b)))
      .map((r) => {
        const v = value(r);
        const rect = svg(
          'rect',
          { x, y: y(base + v), width: barW, height: Math.max(0, y(base) - y(base + v)), fill: COLOURS[series.indexOf(name(r)) % COLOURS.length], 'data-series': name(r), 'data-time': t, 'data-value': v },
          svg('title', {}, `${t} · ${name(r)}: ${label(v)} (${r.requests} requests)`),
        );
        base += v;
        return rect;
      });
  });
  const every = Math.ceil(times.length / 12);
  return h(
    'div',
    { class: 'chart' },
    svg(
      'svg',
      { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'spend chart', 'data-testid': 'spend-chart' },
      [0, 0.5, 1].map((f) => [
        svg('line', { x1: left, x2: width - 10, y1: y(max * f), y2: y(max * f), class: 'grid' }),
        svg('text', { x: left - 6, y: y(max * f) + 4, 'text-anchor': 'end', class: 'axis' }, label(max * f)),
      ]),
      bars,
      times.map((t, i) => (i % every === 0 ? svg('text', { x: left + i * slot + slot / 2, y: height - bottom + 16, 'text-anchor': 'middle', class: 'axis' }, t.length > 10 ? t.slice(5, 13).replace('T', ' ') : t.slice(5)) : null)),
    ),
    h('ul', { class: 'legend' }, series.map((s, i) => h('li', {}, h('span', { class: 'swatch', style: { background: COLOURS[i % COLOURS.length] } }), s))),
  );
}

function totals(rows, name) {
  const byName = new Map();
  for (const r of rows) {
    const t = byName.get(name(r)) ?? { name: name(r), requests: 0, errors: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 };
    for (const k of ['requests', 'errors', 'promptTokens', 'completionTokens', 'totalTokens', 'cost']) t[k] += r[k];
    byName.set(t.name, t);
  }
  return table(
    [
      ['', (t) => t.name],
      ['requests', (t) => fmt.int(t.requests)],
      ['errors', (t) => fmt.int(t.errors)],
      ['prompt tokens', (t) => fmt.int(t.promptTokens)],
      ['completion tokens', (t) => fmt.int(t.completionTokens)],
      ['total tokens', (t) => fmt.int(t.totalTokens)],
      ['cost', (t) => fmt.dollars(t.cost)],
    ],
    [...byName.values()],
    { testid: 'spend-totals' },
  );
}
