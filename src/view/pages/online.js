/*
 * kloop view: the online page (#/online, #/online/ID) of an online study (mode: online). From
 * GET /api/online: every experiment's arms, units per window, lift, anytime-valid interval and
 * decision (a table), and for each experiment the series of its stored looks — Δ of the primary
 * metric with its interval over looks (a chart) — and the verdicts of every check, per look.
 * A simulated run's notebook is labelled SIMULATED.
 */
(() => {
  const Kloop = (window.Kloop = window.Kloop || {});
  const { h, format, charts } = Kloop;
  const { reasonBadge } = Kloop.colors;

  const percent = (value) => (value === null || value === undefined ? '—' : `${(value * 100).toFixed(2)}%`);
  const signedPercent = (value) =>
    value === null || value === undefined ? '—' : `${value >= 0 ? '+' : '−'}${Math.abs(value * 100).toFixed(1)}%`;
  const end = (value, sign) => (value === null || value === undefined ? (sign < 0 ? '−∞' : '∞') : format.signed(value));
  const interval = (value) => (value ? `[${end(value.lower, -1)}, ${end(value.upper, 1)}]` : '—');
  const num = (value) => h('td', { class: 'num' }, value);
  const VERDICT_COLORS = { pass: '#1a9850', fail: '#d73027', wait: '#8c96a0' };
  const verdictBadge = (check) =>
    h(
      'span',
      {
        class: 'badge',
        style: `background:${VERDICT_COLORS[check.verdict] || '#5d6d7e'}`,
        title: check.verdict,
        'data-check': check.name,
      },
      `${check.name} ${check.verdict}`,
    );

  function table(headers, rows, attributes) {
    return h(
      'table',
      attributes || {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((header) => h('th', {}, header)),
        ),
      ),
      h('tbody', {}, rows),
    );
  }

  /** Δ of the primary metric and its anytime-valid interval over the experiment's looks. */
  function lookChart(canvas, experiment) {
    const points = experiment.series;
    const labels = points.map((look) => `look ${look.look} · ${look.at.slice(0, 16).replace('T', ' ')}`);
    const options = charts.baseOptions();
    options.interaction = { mode: 'index', intersect: false };
    options.scales = {
      y: { title: { display: true, text: `Δ ${experiment.primary.metric} (positive = candidate better)` } },
    };
    const line = (label, values, color, extra) => ({
      label,
      data: values,
      borderColor: color,
      backgroundColor: color,
      pointRadius: 2,
      spanGaps: false,
      ...extra,
    });
    return charts.mount(canvas, {
      type: 'line',
      data: {
        labels,
        datasets: [
          line(
            'Δ (candidate − incumbent)',
            points.map((look) => look.delta),
            '#2457a6',
            { borderWidth: 2, kloopRole: 'delta' },
          ),
          line(
            'interval, upper',
            points.map((look) => (look.interval ? look.interval.upper : null)),
            '#9ecae1',
            { borderDash: [4, 3], kloopRole: 'upper', fill: '+1', backgroundColor: 'rgba(158,202,225,0.25)' },
          ),
          line(
            'interval, lower',
            points.map((look) => (look.interval ? look.interval.lower : null)),
            '#9ecae1',
            { borderDash: [4, 3], kloopRole: 'lower' },
          ),
          line(
            '0',
            points.map(() => 0),
            '#8c96a0',
            { borderWidth: 1, pointRadius: 0, kloopRole: 'zero' },
          ),
        ],
      },
      options,
    });
  }

  function summaryRow(ctx, experiment) {
    const { primary, units } = experiment;
    return h(
      'tr',
      {
        class: 'clickable',
        'data-online-experiment': experiment.id,
        onclick: () => ctx.navigate(`#/online/${experiment.id}`),
      },
      h('td', {}, h('a', { href: `#/online/${experiment.id}` }, `#${experiment.id}`)),
      h('td', {}, experiment.kind === 'aa' ? 'A/A' : 'A/B'),
      h(
        'td',
        {},
        experiment.reason
          ? reasonBadge(experiment.reason)
          : `${experiment.status} · waiting: ${experiment.waitingFor || 'next look'}`,
      ),
      h('td', { class: 'delta-text', title: experiment.rationale }, format.cut(experiment.rationale, 60)),
      num(experiment.candidateShare === 0 ? '—' : percent(experiment.candidateShare)),
      num(`${units.decision.incumbent} / ${units.decision.candidate}`),
      num(`${units.confirmation.incumbent} / ${units.confirmation.candidate}`),
      num(primary.analysedUnits === 0 ? '—' : `${percent(primary.incumbentMean)} → ${percent(primary.candidateMean)}`),
      h(
        'td',
        { class: `num ${format.signClass(primary.relativeLift)}` },
        primary.analysedUnits === 0 ? '—' : signedPercent(primary.relativeLift),
      ),
      num(interval(primary.interval)),
      num(String(experiment.looks)),
    );
  }

  function experimentCard(experiment, label) {
    const canvas = h('canvas', {
      id: `online-chart-${experiment.id}`,
      'data-testid': 'online-chart',
      'data-points': experiment.series.length,
      role: 'img',
      'aria-label': `Δ and interval over ${experiment.series.length} looks`,
    });
    const checks =
      experiment.checks.length === 0
        ? h('p', { class: 'muted' }, 'No look yet: no unit’s attribution window has closed.')
        : table(
            ['check', 'verdict', 'statistic', 'threshold', 'p', 'detail'],
            experiment.checks.map((check) =>
              h(
                'tr',
                { 'data-check': check.name },
                h('td', {}, check.name),
                h('td', {}, check.verdict),
                num(format.statistic(check.statistic)),
                num(format.statistic(check.threshold)),
                num(check.pValue === undefined ? '—' : format.pValue(check.pValue)),
                h('td', { class: 'delta-text' }, check.detail),
              ),
            ),
            { 'data-testid': 'online-checks' },
          );
    const looks = table(
      ['look', 'at', 'window', 'units i / c', 'means i → c', 'Δ', 'interval', 'p', 'outcome', 'checks'],
      [...experiment.series]
        .reverse()
        .map((look) =>
          h(
            'tr',
            { 'data-look': look.look },
            num(String(look.look)),
            h('td', {}, format.time(look.at)),
            h('td', {}, look.window),
            num(`${look.units.incumbent} / ${look.units.candidate}`),
            num(`${percent(look.incumbentMean)} → ${percent(look.candidateMean)}`),
            h('td', { class: `num ${format.signClass(look.delta)}` }, format.signed(look.delta)),
            num(interval(look.interval)),
            num(look.pValue === null ? '—' : format.pValue(look.pValue)),
            h('td', {}, look.reason ? `${look.outcome} (${look.reason})` : look.outcome),
            h('td', {}, look.checks.map(verdictBadge)),
          ),
        ),
      { 'data-testid': 'online-looks' },
    );
    return h(
      'section',
      { class: 'card', 'data-testid': 'online-experiment', 'data-experiment': experiment.id },
      h(
        'h2',
        {},
        `${label}Experiment #${experiment.id} · ${experiment.kind === 'aa' ? 'A/A calibration' : 'A/B'} · ${experiment.status}${experiment.reason ? ` (${experiment.reason})` : ''}`,
      ),
      h(
        'p',
        { class: 'muted' },
        `Variant: ${experiment.rationale} — incumbent v${experiment.incumbentVersionId}, candidate v${experiment.candidateVersionId}; started ${format.time(experiment.startedAt)}${experiment.decidedAt ? `, decided ${format.time(experiment.decidedAt)}` : ''}.`,
      ),
      experiment.series.length === 0
        ? h('p', { class: 'muted' }, 'No look stored yet.')
        : h('div', { class: 'chart-box' }, canvas),
      h(
        'p',
        { class: 'legend-note' },
        `Δ of ${experiment.primary.metric} on the decision window's closed units at each look, as stored in the notebook when the gate looked; the band is the anytime-valid ${experiment.series.some((look) => look.interval) ? `${Math.round(((experiment.series.find((look) => look.interval) || {}).interval || { level: 0.95 }).level * 100)}% ` : ''}confidence sequence (absent at looks before the primary metric was judged).`,
      ),
      h('h3', {}, 'Checks of the last look'),
      checks,
      h('h3', {}, 'Every look'),
      h('div', { class: 'table-scroll' }, looks),
    );
  }

  async function online(ctx, id) {
    const data = await ctx.load('/api/online');
    const label = data.simulated ? 'SIMULATED — ' : '';
    const root = h('div', { 'data-page': 'online' });
    const ab = data.experiments.filter((experiment) => experiment.kind === 'ab');
    root.append(
      h('h1', {}, `${label}Online experiments`),
      data.simulated
        ? h(
            'div',
            { class: 'notice', 'data-testid': 'simulated' },
            'SIMULATED: the notebook of `kloop run --simulate` — a simulated audience on a simulated clock, no real traffic.',
          )
        : null,
      h(
        'div',
        { class: 'tiles' },
        h(
          'div',
          { class: 'tile' },
          h('div', { class: 'label' }, 'A/B experiments'),
          h('div', { class: 'value' }, String(ab.length)),
          h(
            'div',
            { class: 'sub' },
            `${ab.filter((experiment) => experiment.status === 'accepted').length} accepted · ${ab.filter((experiment) => experiment.status === 'refused' || experiment.status === 'invalid').length} refused`,
          ),
        ),
        h(
          'div',
          { class: 'tile' },
          h('div', { class: 'label' }, 'primary metric'),
          h('div', { class: 'value' }, data.primary.name),
          h(
            'div',
            { class: 'sub' },
            `${data.primary.kind}, ${data.primary.direction}; guardrails: ${data.guardrails.map((guardrail) => `${guardrail.name} (margin ${guardrail.margin})`).join(', ') || 'none'}`,
          ),
        ),
        h(
          'div',
          { class: 'tile' },
          h('div', { class: 'label' }, 'stop reason'),
          h('div', { class: 'value' }, data.stopped ? data.stopped.reason : '—'),
          h(
            'div',
            { class: 'sub' },
            data.stopped
              ? data.stopped.detail
              : `active version ${data.activeVersionId === null ? '—' : `v${data.activeVersionId}`}`,
          ),
        ),
      ),
      h(
        'section',
        { class: 'card' },
        h('h2', {}, `${label}Where every experiment stands`),
        data.experiments.length === 0
          ? h('p', { class: 'muted' }, 'No experiment yet: `kloop run` on this study starts the A/A calibration.')
          : h(
              'div',
              { class: 'table-scroll' },
              table(
                [
                  '#',
                  'kind',
                  'decision',
                  'variant',
                  'share',
                  'units decision i / c',
                  'units confirm i / c',
                  `${data.primary.name} i → c`,
                  'lift',
                  'Δ interval',
                  'looks',
                ],
                data.experiments.map((experiment) => summaryRow(ctx, experiment)),
                { 'data-testid': 'online-table' },
              ),
            ),
      ),
    );
    const shown =
      id === undefined
        ? data.experiments
        : data.experiments.filter((experiment) => String(experiment.id) === decodeURIComponent(id));
    if (id !== undefined && shown.length === 0)
      throw new Error(`No online experiment ${decodeURIComponent(id)} in this study.`);
    const cards = [...shown].reverse().map((experiment) => ({ experiment, card: experimentCard(experiment, label) }));
    for (const entry of cards) root.append(entry.card);
    ctx.mount(root);
    for (const { experiment, card } of cards) {
      const canvas = card.querySelector('canvas');
      if (canvas && experiment.series.length > 0) lookChart(canvas, experiment);
    }
  }

  Kloop.pages = Kloop.pages || {};
  Kloop.pages.online = online;
})();
