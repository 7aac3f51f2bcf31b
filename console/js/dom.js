// Small DOM helpers. Text always goes in as text nodes (never innerHTML), so nothing the API
// returns can become markup.

/** h('tr', { class: 'x', onclick: fn }, child, 'text', [more]) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el, attrs) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'style') Object.assign(el.style, value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A table: columns are [header, row => cell content]; onRow makes rows clickable. */
export function table(columns, rows, { onRow, rowClass, testid } = {}) {
  return h(
    'table',
    { 'data-testid': testid },
    h('thead', {}, h('tr', {}, columns.map(([title]) => h('th', {}, title)))),
    h(
      'tbody',
      {},
      rows.length === 0
        ? h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, 'Nothing here yet.'))
        : rows.map((row) =>
            h(
              'tr',
              { class: [onRow ? 'clickable' : '', rowClass?.(row) ?? ''].join(' ').trim() || undefined, onclick: onRow && (() => onRow(row)) },
              columns.map(([, cell]) => h('td', {}, cell(row))),
            ),
          ),
    ),
  );
}

/** A titled section; an error from its loader shows in place of its content, not over the page. */
export function section(title, ...children) {
  return h('section', { class: 'card' }, h('h2', {}, title), ...children);
}

export function errorBox(error) {
  return h('p', { class: 'error', role: 'alert' }, error instanceof Error ? error.message : String(error));
}

/** Key/value pairs as a definition list. */
export function details(pairs) {
  return h('dl', { class: 'details' }, pairs.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]));
}

export const fmt = {
  int: (n) => (n === null || n === undefined ? '—' : Math.round(n).toLocaleString('en-US')),
  // Request costs are fractions of a cent; budgets are dollars.
  dollars: (n) => (n === null || n === undefined ? '—' : n === 0 ? '$0' : `$${n < 0.01 ? n.toPrecision(2) : n.toFixed(n < 1 ? 4 : n < 100 ? 2 : 0)}`),
  amount: (n, type) => (type === 'cost' ? fmt.dollars(n) : `${fmt.int(n)} tokens`),
  ms: (n) => (n === null || n === undefined ? '—' : `${n.toFixed(n < 10 ? 1 : 0)} ms`),
  date: (value) => {
    if (value === null || value === undefined) return '—';
    const d = typeof value === 'number' ? new Date(value * 1000) : new Date(value);
    return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  },
  /** Month, day and time: enough for a table row (the details show the whole date). */
  time: (value) => (value === null || value === undefined ? '—' : fmt.date(value).slice(5, 19)),
  json: (value) => h('pre', { class: 'json' }, JSON.stringify(value, null, 2)),
};

export function badge(text, kind = text) {
  return h('span', { class: `badge badge-${String(kind).replace(/[^a-z0-9_-]/gi, '')}` }, text);
}
