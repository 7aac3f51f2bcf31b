// Sign-in, navigation and the frame around the views. Each view is a function
// (root, ctx, signal) => Promise; switching views aborts the previous one's signal, which closes
// its subscriptions and timers.
import { gql, session } from './api.js';
import { clear, errorBox, h } from './dom.js';
import { usageView } from './views/usage.js';
import { spendView } from './views/spend.js';
import { logsView } from './views/logs.js';
import { runsView } from './views/runs.js';
import { integrationsView, providersView, guardrailsView, policiesView } from './views/settings.js';

const VIEWS = [
  ['usage', 'Usage', usageView],
  ['spend', 'Spend', spendView],
  ['logs', 'Request log', logsView],
  ['runs', 'Runs', runsView],
  ['integrations', 'Integrations', integrationsView],
  ['providers', 'Providers', providersView],
  ['guardrails', 'Guardrails', guardrailsView],
  ['policies', 'Policies', policiesView],
];

const VIEWER = `{ viewer {
  apiKey { id name type workspaceId keyPrefix }
  organisation { id name }
  workspaces { id slug name isDefault }
} }`;

const app = document.getElementById('app');
let current;

async function start() {
  if (!session.key) return signInPage();
  let viewer;
  try {
    viewer = (await gql(VIEWER)).viewer;
  } catch (error) {
    session.signOut();
    return signInPage(error);
  }
  const ctx = {
    viewer,
    workspaces: viewer.workspaces,
    workspaceName: (id) => viewer.workspaces.find((w) => w.id === id)?.slug ?? id,
  };
  const main = h('main', { id: 'view' });
  const nav = h(
    'nav',
    {},
    VIEWS.map(([id, title]) => h('a', { href: `#/${id}`, 'data-view': id }, title)),
  );
  clear(
    app,
    h(
      'header',
      {},
      h('h1', {}, 'Gatehouse'),
      h('span', { class: 'who', 'data-testid': 'who' }, `${viewer.organisation.name} · ${viewer.apiKey.name} (${viewer.apiKey.type} key ${viewer.apiKey.keyPrefix}…)`),
      h('button', { type: 'button', class: 'link', onclick: () => (session.signOut(), location.hash = '', start()) }, 'Sign out'),
    ),
    nav,
    main,
  );
  const show = () => {
    const id = location.hash.replace(/^#\//, '') || 'usage';
    const view = VIEWS.find(([v]) => v === id) ?? VIEWS[0];
    for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.dataset.view === view[0]);
    current?.abort();
    current = new AbortController();
    const signal = current.signal;
    clear(main, h('p', { class: 'loading' }, 'Loading…'));
    main.dataset.view = view[0];
    main.removeAttribute('data-ready');
    view[2](main, ctx, signal)
      .catch((error) => !signal.aborted && clear(main, errorBox(error)))
      .finally(() => !signal.aborted && main.setAttribute('data-ready', ''));
  };
  window.onhashchange = show;
  show();
}

function signInPage(error) {
  current?.abort();
  window.onhashchange = null;
  const input = h('input', { type: 'password', name: 'key', autocomplete: 'off', required: true, placeholder: 'gk_live_…', 'aria-label': 'API key' });
  clear(
    app,
    h(
      'form',
      {
        class: 'signin card',
        onsubmit: (event) => {
          event.preventDefault();
          session.signIn(input.value.trim());
          start();
        },
      },
      h('h1', {}, 'Gatehouse console'),
      h('p', {}, 'Sign in with an API key. It is kept in this browser tab only (sessionStorage) and sent to this gateway alone.'),
      input,
      h('button', { type: 'submit' }, 'Sign in'),
      error && errorBox(error),
    ),
  );
  input.focus();
}

start();
