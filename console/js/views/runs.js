// Runs: the newest runs of the key's workspace, their status changes arriving live over the
// runEvents subscription (graphql-sse), and a selected run's event timeline. New runs are found
// by re-reading the list (there is no workspace-wide run subscription); the newest active runs
// are followed live, at most MAX_LIVE at once so that their open streams leave the browser's
// per-origin connections (six over HTTP/1.1) for the other requests.
import { gql, subscribe } from '../api.js';
import { badge, clear, errorBox, fmt, h, section, table } from '../dom.js';

const RUN_FIELDS = 'id threadId status model assistantId createdAt startedAt completedAt failedAt cancelledAt lastError { code message } usage { totalTokens }';
const LIST = `{ threads(limit: 20) { data { id runs(limit: 5) { data { ${RUN_FIELDS} } } } } }`;
const EVENTS = `query($t: String!, $r: String!) { run(threadId: $t, id: $r) { ${RUN_FIELDS} events(limit: 200) { sequence event data } } }`;
const FOLLOW = `subscription($t: String!, $r: String!, $after: Int) { runEvents(threadId: $t, runId: $r, after: $after) { sequence event data } }`;
const ACTIVE = new Set(['queued', 'in_progress', 'requires_action', 'cancelling']);
const MAX_LIVE = 3;
const REFRESH_MS = 2000;

export async function runsView(root, ctx, signal) {
  const runs = new Map(); // run id → run
  const live = new Map(); // run id → { controller, after }
  let selected = null; // { run, events, box }
  const list = h('div', {});
  const timeline = h('div', { class: 'detail-pane' }, h('p', { class: 'muted' }, 'Pick a run to see its event timeline.'));
  const liveNote = h('span', { class: 'muted', 'data-testid': 'live-count' });
  clear(root, h('div', { class: 'toolbar' }, h('span', {}, 'Newest runs of this key’s workspace, refreshed every 2 s; '), liveNote), h('div', { class: 'split' }, list, timeline));
  signal.addEventListener('abort', () => {
    for (const { controller } of live.values()) controller.abort();
  });

  function render() {
    const rows = [...runs.values()].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
    liveNote.textContent = `${live.size} followed live`;
    clear(
      list,
      table(
        [
          ['created', (r) => fmt.time(r.createdAt)],
          ['run', (r) => h('span', { class: 'mono' }, r.id)],
          ['status', (r) => badge(r.status)],
          ['model', (r) => r.model],
          ['tokens', (r) => (r.usage ? fmt.int(r.usage.totalTokens) : '—')],
          ['live', (r) => (live.has(r.id) ? badge('live') : '')],
        ],
        rows,
        { onRow: (r) => open(r).catch((error) => clear(timeline, errorBox(error))), rowClass: (r) => `run-${r.status}`, testid: 'runs' },
      ),
    );
  }

  async function refresh() {
    const threads = (await gql(LIST)).threads.data;
    if (signal.aborted) return;
    for (const t of threads) for (const r of t.runs.data) runs.set(r.id, { ...runs.get(r.id), ...r });
    const newestActive = [...runs.values()].filter((r) => ACTIVE.has(r.status)).sort((a, b) => b.createdAt - a.createdAt);
    for (const r of newestActive) if (live.size < MAX_LIVE && !live.has(r.id)) follow(r);
    render();
  }

  /** Status changes of one run until it ends; its `thread.run.*` events carry the whole run. */
  function follow(run) {
    const controller = new AbortController();
    const entry = { controller, after: 0 };
    live.set(run.id, entry);
    subscribe(
      FOLLOW,
      { t: run.threadId, r: run.id, after: 0 },
      ({ runEvents: e }) => {
        entry.after = e.sequence;
        if (e.event.startsWith('thread.run.') && !e.event.startsWith('thread.run.step') && e.data?.status) {
          const known = runs.get(run.id);
          runs.set(run.id, { ...known, status: e.data.status, usage: e.data.usage ?? known?.usage });
          render();
        }
        if (selected?.run.id === run.id) addEvent(e);
      },
      controller.signal,
    )
      .catch(() => {}) // a dropped stream is picked up again by the next refresh
      .finally(() => {
        live.delete(run.id);
        if (!signal.aborted) render();
      });
  }

  async function open(run) {
    const full = (await gql(EVENTS, { t: run.threadId, r: run.id })).run;
    if (signal.aborted) return;
    const box = h('ol', { class: 'timeline', 'data-testid': 'timeline' });
    selected = { run: full, seen: new Set(), box };
    clear(timeline, section(`Run ${full.id}`, h('p', {}, badge(full.status), ' ', full.lastError ? `${full.lastError.code}: ${full.lastError.message}` : ''), box));
    for (const e of full.events) addEvent(e);
  }

  function addEvent(e) {
    if (selected.seen.has(e.sequence)) return;
    selected.seen.add(e.sequence);
    selected.box.append(h('li', { 'data-event': e.event }, h('span', { class: 'mono muted' }, `#${e.sequence} `), h('strong', {}, e.event), ' ', h('span', { class: 'summary' }, summary(e))));
  }

  await refresh();
  (function loop() {
    setTimeout(() => {
      if (signal.aborted) return;
      refresh().catch((error) => !signal.aborted && clear(list, errorBox(error))).finally(() => !signal.aborted && loop());
    }, REFRESH_MS);
  })();
}

/** One line about an event: a run's status, a message's text delta, a step's type. */
function summary(e) {
  const d = e.data ?? {};
  if (e.event === 'thread.message.delta') return d.delta?.content?.map((c) => c.text?.value ?? '').join('') ?? '';
  if (d.object === 'thread.run') return `${d.status}${d.required_action ? ` (tool calls: ${d.required_action.submit_tool_outputs.tool_calls.map((c) => c.function.name).join(', ')})` : ''}`;
  if (d.object === 'thread.run.step') return `${d.type} · ${d.status}`;
  if (d.object === 'thread.message') return `${d.role} message · ${d.status}`;
  return '';
}
