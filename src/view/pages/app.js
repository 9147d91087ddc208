/*
 * kloop view: routing (#/overview, #/experiments/ID, #/versions?a=&b=, #/corpus, #/review, #/signals;
 * an online study: #/online, #/online/ID, and #/versions),
 * data (the viewer's JSON API, or the data embedded in an offline report), live updates (server-sent
 * events: the current page is drawn again whenever the notebook changes) and the decision dialog
 * (activate a version, approve or reject a review item: a name, and the viewer's token).
 */
(() => {
  const Kloop = (window.Kloop = window.Kloop || {});
  const { h, pages, charts } = Kloop;
  /** The offline report embeds its data: { generatedAt, study, data: { '/api/...': json } }. */
  const REPORT = window.KLOOP_REPORT || null;
  const main = document.getElementById('main');
  const status = document.getElementById('status');
  const state = {
    renders: 0,
    changes: 0,
    rendering: false,
    dirty: false,
    notice: null,
    live: false,
    study: null,
    missedChange: false,
  };
  window.kloopState = state;

  function storage(name, value) {
    try {
      if (value === undefined) return window.sessionStorage.getItem(name) || '';
      window.sessionStorage.setItem(name, value);
    } catch (error) {
      // storage unavailable (file:// in some browsers): nothing is remembered
    }
    return '';
  }

  async function load(path) {
    if (REPORT) {
      if (Object.hasOwn(REPORT.data, path)) return REPORT.data[path];
      throw new Error('This page is not part of the report: open the study with `kloop view` for it.');
    }
    const response = await fetch(path, { headers: { Accept: 'application/json' } });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.message || `${response.status} ${response.statusText}`);
    return body;
  }

  async function post(path, decision) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (decision.token) headers.Authorization = `Bearer ${decision.token}`;
    const response = await fetch(path, {
      method: 'POST',
      headers,
      body: JSON.stringify({ by: decision.by, note: decision.note }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      const error = new Error(`Refused (${response.status}): ${body.message || response.statusText}`);
      error.status = response.status;
      throw error;
    }
    return body;
  }

  // ------------------------------------------------------------ the dialog
  const dialog = document.getElementById('decision-dialog');
  const form = document.getElementById('decision-form');
  let pending = null;
  function decide(options) {
    pending = options;
    document.getElementById('decision-title').textContent = options.title;
    document.getElementById('decision-text').textContent = options.text;
    document.getElementById('decision-confirm').textContent = options.confirm;
    document.getElementById('decision-error').textContent = '';
    document.getElementById('decision-by').value = storage('kloop-name');
    document.getElementById('decision-note').value = '';
    document.getElementById('decision-token').value = storage('kloop-token');
    const writable = state.study ? state.study.writable : true;
    document.getElementById('decision-token-label').hidden = !writable;
    if (!writable)
      document.getElementById('decision-error').textContent =
        (state.study && state.study.readOnly) || 'This viewer is read-only: the change will be refused.';
    dialog.showModal();
    document.getElementById('decision-by').focus();
  }
  // A change heard while the dialog was open (not drawn under it): draw it once the dialog closes.
  dialog.addEventListener('close', () => {
    if (!state.missedChange) return;
    state.missedChange = false;
    void refreshStatus();
    void render();
  });
  document.getElementById('decision-cancel').addEventListener('click', (event) => {
    event.preventDefault();
    pending = null;
    dialog.close();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!pending) return;
    const by = document.getElementById('decision-by').value.trim();
    const note = document.getElementById('decision-note').value.trim();
    const token = document.getElementById('decision-token').value.trim();
    const error = document.getElementById('decision-error');
    if (by === '') {
      error.textContent = 'Your name is required: it is recorded in the notebook.';
      return;
    }
    const confirm = document.getElementById('decision-confirm');
    confirm.disabled = true;
    error.textContent = '';
    try {
      const result = await pending.submit({ by, note: note === '' ? undefined : note, token });
      storage('kloop-name', by);
      if (token) storage('kloop-token', token);
      // Shown on this page until the user navigates away (live redraws keep it).
      state.notice = { hash: window.location.hash, text: pending.done(result) };
      pending = null;
      state.missedChange = false; // drawn again below, header included
      dialog.close();
      void refreshStatus();
      await render();
    } catch (failure) {
      error.textContent = failure.message;
    } finally {
      confirm.disabled = false;
    }
  });

  // --------------------------------------------------------------- routing
  function route() {
    const hash = window.location.hash.replace(/^#/, '') || '/overview';
    const [pathPart, queryPart] = hash.split('?');
    const parts = pathPart.split('/').filter(Boolean);
    return { page: parts[0] || 'overview', id: parts[1], query: new URLSearchParams(queryPart || '') };
  }
  function navigate(hash) {
    if (window.location.hash === hash) void render();
    else window.location.hash = hash;
  }
  /** Thrown by `mount` when the route changed while the page loaded: the new route is drawn instead. */
  const STALE = new Error('stale');

  async function render() {
    if (state.rendering) {
      state.dirty = true;
      return;
    }
    state.rendering = true;
    const current = route();
    // An online study has no corpus, composites or signals: its pages are the online experiments and the versions.
    if (state.study && state.study.online && current.page !== 'versions') current.page = 'online';
    for (const link of document.querySelectorAll('#nav a'))
      link.classList.toggle(
        'current',
        link.dataset.page === (current.page === 'experiments' ? 'overview' : current.page),
      );
    // A live redraw of the same page keeps the scroll position; a new page starts at the top.
    const scroll = state.lastHash === window.location.hash ? window.scrollY : 0;
    state.lastHash = window.location.hash;
    if (state.notice && state.notice.hash !== window.location.hash) state.notice = null;
    const notice = state.notice
      ? h('div', { class: 'notice ok', role: 'status', 'data-testid': 'notice' }, state.notice.text)
      : null;
    const key = window.location.hash;
    const mount = (root) => {
      if (window.location.hash !== key) throw STALE;
      charts.destroyAll();
      main.replaceChildren(root);
    };
    const ctx = { load, post, mount, navigate, decide, report: Boolean(REPORT), notice };
    try {
      if (current.page === 'online') await pages.online(ctx, current.id);
      else if (current.page === 'experiments' && current.id)
        await pages.experiment(ctx, encodeURIComponent(current.id));
      else if (current.page === 'versions') await pages.versions(ctx, current.query);
      else if (current.page === 'corpus') await pages.corpus(ctx);
      else if (current.page === 'review') await pages.review(ctx, current.query);
      else if (current.page === 'signals') await pages.signals(ctx);
      else await pages.overview(ctx);
      window.scrollTo(0, scroll);
    } catch (error) {
      if (error === STALE) state.dirty = true;
      else if (window.location.hash === key) {
        charts.destroyAll();
        main.replaceChildren(h('div', { class: 'card' }, h('p', { class: 'error' }, error.message)));
      } else state.dirty = true;
    } finally {
      state.renders += 1;
      document.body.dataset.renders = String(state.renders);
      document.body.dataset.page = current.page;
      state.rendering = false;
    }
    if (state.dirty) {
      state.dirty = false;
      await render();
    }
  }

  // ---------------------------------------------------------- study status
  async function refreshStatus() {
    if (REPORT) {
      status.replaceChildren(h('span', { class: 'pill' }, `report · ${Kloop.format.time(REPORT.generatedAt)}`));
      document.getElementById('study-name').textContent = REPORT.study;
      return;
    }
    try {
      const study = await load('/api/study');
      state.study = study;
      document.getElementById('study-name').textContent = study.simulated ? `${study.study} — SIMULATED` : study.study;
      for (const link of document.querySelectorAll('#nav a'))
        link.hidden = study.online
          ? !['online', 'versions'].includes(link.dataset.page)
          : link.dataset.page === 'online';
      document.title = `kloop view · ${study.name}`;
      status.replaceChildren(
        ...[
          h('span', { class: 'pill' }, study.activeVersion === null ? 'no run yet' : `active v${study.activeVersion}`),
          study.runInProgress
            ? h(
                'span',
                { class: 'pill running', 'data-testid': 'run-in-progress' },
                `run ${study.runInProgress.run ?? ''} in progress (pid ${study.runInProgress.pid})`,
              )
            : null,
          h(
            'span',
            {
              class: `pill${state.live ? ' live' : ''}`,
              title: state.live ? 'updates as the notebook changes' : 'not connected',
            },
            state.live ? 'live' : 'offline',
          ),
          h(
            'span',
            {
              class: 'pill',
              title: study.writable
                ? 'changes need the token kloop view was started with'
                : study.readOnly || 'read-only',
            },
            study.writable ? 'changes need the token' : 'read-only',
          ),
        ].filter(Boolean),
      );
    } catch (error) {
      status.replaceChildren(h('span', { class: 'pill' }, 'viewer unreachable'));
    }
  }

  function connect() {
    if (REPORT || typeof EventSource === 'undefined') return;
    const source = new EventSource('/api/events');
    let first = true;
    source.addEventListener('hello', () => {
      state.live = true;
      void refreshStatus();
      if (!first) void render(); // reconnected: something may have changed meanwhile
      first = false;
    });
    source.addEventListener('change', () => {
      state.changes += 1;
      if (dialog.open) {
        state.missedChange = true; // do not redraw under an open dialog: done when it closes
        return;
      }
      void refreshStatus();
      void render();
    });
    source.addEventListener('error', () => {
      state.live = false;
      void refreshStatus();
    });
  }

  function start() {
    if (REPORT) {
      document.body.insertBefore(
        h(
          'div',
          { class: 'report-banner' },
          `A snapshot of ${REPORT.study}, generated ${Kloop.format.time(REPORT.generatedAt)} by kloop report. For live updates, rollback and review, run kloop view on the study.`,
        ),
        document.body.firstChild,
      );
      for (const link of document.querySelectorAll('#nav a')) {
        if (!Object.keys(REPORT.data).some((key) => key.startsWith(`/api/${link.dataset.page}`))) link.hidden = true;
      }
    }
    window.addEventListener('hashchange', () => void render());
    // The study is known before the first page is drawn (an online study's pages differ).
    void refreshStatus().then(() => render());
    connect();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
