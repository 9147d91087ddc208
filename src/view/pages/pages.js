/* kloop view: the pages. Each renders into a fresh container from the data `ctx.load(path)` returns. */
(() => {
  const Kloop = (window.Kloop = window.Kloop || {});
  const { h, format, charts } = Kloop;
  const { reasonBadge, PARTITION_COLORS } = Kloop.colors;

  function tile(label, value, sub) {
    return h(
      'div',
      { class: 'tile' },
      h('div', { class: 'label' }, label),
      h('div', { class: 'value' }, value),
      sub ? h('div', { class: 'sub' }, sub) : null,
    );
  }
  function card(title, ...children) {
    return h('section', { class: 'card' }, title ? h('h2', {}, title) : null, ...children);
  }
  function partitionBadge(partition) {
    return h('span', { class: 'badge', style: `background:${PARTITION_COLORS[partition] || '#5d6d7e'}` }, partition);
  }
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
          headers.map((header) =>
            typeof header === 'string' ? h('th', {}, header) : h('th', header.attributes, header.label),
          ),
        ),
      ),
      h('tbody', {}, rows),
    );
  }
  const num = (value) => h('td', { class: 'num' }, value);

  /** The side-by-side diff of two texts (rows from the server). */
  function diffTable(diff, leftTitle, rightTitle) {
    if (diff.identical) return h('p', { class: 'muted' }, 'The two versions are identical.');
    return h(
      'div',
      {},
      h('p', { class: 'muted' }, `${diff.removed} line(s) removed, ${diff.added} added.`),
      h(
        'table',
        { class: 'diff', 'data-testid': 'diff' },
        h(
          'colgroup',
          {},
          h('col', { style: 'width:44px' }),
          h('col', {}),
          h('col', { style: 'width:44px' }),
          h('col', {}),
        ),
        h('thead', {}, h('tr', {}, h('th', {}, ''), h('th', {}, leftTitle), h('th', {}, ''), h('th', {}, rightTitle))),
        h(
          'tbody',
          {},
          diff.rows.map((row) =>
            row.kind === 'gap'
              ? h('tr', { class: 'gap' }, h('td', { colspan: 4 }, `⋯ ${row.left} ⋯`))
              : h(
                  'tr',
                  { class: row.kind },
                  h('td', { class: 'ln' }, row.leftNumber ?? ''),
                  h(
                    'td',
                    { class: 'l' },
                    row.left === null ? '' : (row.kind === 'del' || row.kind === 'change' ? '− ' : '  ') + row.left,
                  ),
                  h('td', { class: 'ln' }, row.rightNumber ?? ''),
                  h(
                    'td',
                    { class: 'r' },
                    row.right === null ? '' : (row.kind === 'add' || row.kind === 'change' ? '+ ' : '  ') + row.right,
                  ),
                ),
          ),
        ),
      ),
    );
  }

  // ---------------------------------------------------------------- overview
  async function overview(ctx) {
    const data = await ctx.load('/api/overview');
    const root = h('div', { 'data-page': 'overview' });
    const evaluated = data.experiments.filter((experiment) => experiment.composite !== null);
    const last = data.trail[data.trail.length - 1];
    const first = data.trail[0];
    const budget = data.budget;
    // The study's headline (kloop.yaml task.reportAs): a routing study's misroute rate, as the CLI reports it.
    const figure = format.headline(data);
    const named = figure.name === 'composite' ? '' : ` ${figure.name}`;
    root.append(
      h('h1', {}, 'Overview'),
      h(
        'div',
        { class: 'tiles' },
        tile(
          'experiments',
          `${data.counts.evaluated}`,
          `${data.counts.accepted} accepted · ${data.counts.refused} refused${data.counts.skipped ? ` · ${data.counts.skipped} skipped` : ''}`,
        ),
        tile(
          `incumbent · optimization${named}`,
          last ? format.score(figure.value(last.composites.optimization)) : '—',
          first
            ? `baseline ${format.score(figure.value(first.composites.optimization))} · version ${data.activeVersion ?? '—'} active`
            : 'no experiment yet',
        ),
        tile(
          `incumbent · shadow${named}`,
          last ? format.score(figure.value(last.composites.shadow)) : '—',
          first ? `baseline ${format.score(figure.value(first.composites.shadow))}` : '',
        ),
        tile(
          'stop reason',
          data.runInProgress ? 'running' : data.stop ? data.stop.reason : '—',
          data.runInProgress
            ? `run ${data.runInProgress.run ?? '?'}, pid ${data.runInProgress.pid} since ${format.time(data.runInProgress.since)}`
            : data.stop
              ? data.stop.detail || `run ${data.stop.run}`
              : 'no run finished yet',
        ),
        tile(
          'executor calls',
          format.number(budget.evaluations.calls),
          `${format.number(budget.evaluations.inputTokens + budget.evaluations.outputTokens)} tokens · ${format.usd(budget.evaluations.costUsd)}`,
        ),
        budget.metered && budget.metered.calls + budget.metered.cachedCalls > 0
          ? tile(
              'metered (executor + proposer)',
              format.usd(budget.metered.costUsd),
              `${format.number(budget.metered.calls)} model calls (${format.number(budget.metered.cachedCalls)} cached) · ${format.number(budget.metered.inputTokens + budget.metered.outputTokens)} tokens · ${budget.metered.runs} run(s)`,
            )
          : null,
      ),
    );
    const canvas = h('canvas', {
      id: 'overview-chart',
      'data-testid': 'overview-chart',
      'data-points': evaluated.length,
      role: 'img',
      'aria-label': `composite per experiment: ${evaluated.length} candidates`,
    });
    root.append(
      card(
        'Composite over experiments',
        h('div', { class: 'chart-box tall' }, canvas),
        h(
          'p',
          { class: 'legend-note' },
          data.counts.experiments === 0
            ? 'No experiment yet: start `kloop run` on this study and this page follows it as it goes. '
            : '',
          `Lines: the incumbent's composite on each partition after each experiment (0 = the seed). Points: each evaluated candidate at its optimization composite, coloured by its decision; click one to open it.${(data.corpusMoves || []).length > 0 ? " Triangles: the corpus moved between rounds (examples graduated or rotated), so the partitions, and the incumbent's composites on them, changed without a decision." : ''} ${evaluated.length} of ${data.counts.experiments} experiments plotted`,
          data.counts.experiments > evaluated.length
            ? ` (${data.counts.experiments - evaluated.length} have no composite: skipped before evaluation or nothing valid).`
            : '.',
        ),
      ),
    );
    const calibrationBox = h('div', { class: 'chart-box small' });
    root.append(
      h(
        'div',
        { class: 'grid halves' },
        card(
          'Calibration history',
          data.calibrations.length === 0
            ? h(
                'p',
                { class: 'muted' },
                "No calibration stored. With a deterministic executor the run-to-run noise is 0 and τ = 0: the paired test carries each decision. Run `kloop calibrate` to measure noise SD, Cohen's d and τ.",
              )
            : [
                calibrationBox,
                table(
                  ['#', 'when', 'noise SD', "Cohen's d", 'τ', 'valid'],
                  data.calibrations.map((record) =>
                    h(
                      'tr',
                      {},
                      h('td', {}, record.id),
                      h('td', {}, format.time(record.createdAt)),
                      num(format.statistic(record.noiseSd)),
                      num(format.statistic(record.cohensD)),
                      num(format.statistic(record.threshold)),
                      h('td', {}, record.valid ? 'yes' : 'no'),
                    ),
                  ),
                ),
              ],
        ),
        card(
          'Runs',
          table(
            [
              'run',
              'started',
              'stopped',
              'stop reason',
              { label: 'model calls', attributes: { class: 'num' } },
              { label: 'cost', attributes: { class: 'num' } },
            ],
            data.runs.map((run) =>
              h(
                'tr',
                {},
                h('td', {}, run.id),
                h('td', {}, format.time(run.startedAt)),
                h(
                  'td',
                  {},
                  run.endedAt
                    ? format.time(run.endedAt)
                    : data.runInProgress && data.runInProgress.run === run.id
                      ? 'in progress'
                      : 'did not finish',
                ),
                h('td', { title: run.stopDetail || '' }, run.stopReason || '—'),
                num(run.usage ? format.number(run.usage.calls) : '—'),
                num(run.usage ? format.usd(run.usage.costUsd) : '—'),
              ),
            ),
          ),
          h('h3', {}, 'Moves of the active version'),
          table(
            ['when', 'version', 'what', 'by'],
            data.registryEvents.map((event) =>
              h(
                'tr',
                {},
                h('td', {}, format.time(event.createdAt)),
                h('td', {}, `v${event.versionId}`),
                h('td', {}, event.reason),
                h('td', {}, event.actor || '—'),
              ),
            ),
          ),
        ),
      ),
    );
    root.append(
      card(
        'Experiments',
        h(
          'div',
          { class: 'table-scroll' },
          table(
            [
              '#',
              'run · round',
              'decision',
              { label: figure.name, attributes: { class: 'num' } },
              { label: 'Δ', attributes: { class: 'num' } },
              { label: 'p', attributes: { class: 'num' } },
              { label: 'Δ shadow', attributes: { class: 'num' } },
              'delta',
            ],
            [...data.experiments].reverse().map((experiment) => {
              const shadowDelta =
                experiment.candidate.shadow !== null && experiment.incumbentBefore.shadow !== null
                  ? experiment.candidate.shadow - experiment.incumbentBefore.shadow
                  : null;
              return h(
                'tr',
                {
                  class: 'clickable',
                  'data-experiment': experiment.id,
                  onclick: () => ctx.navigate(`#/experiments/${experiment.id}`),
                },
                h('td', {}, h('a', { href: `#/experiments/${experiment.id}` }, `#${experiment.id}`)),
                h('td', {}, `${experiment.run} · ${experiment.round}`),
                h('td', {}, reasonBadge(experiment.reason)),
                num(format.score(figure.value(experiment.composite))),
                // Coloured by the composite's direction (green: better), shown in the headline (a misroute rate falls when better).
                h(
                  'td',
                  { class: `num ${format.signClass(experiment.compositeDelta)}` },
                  format.signed(figure.delta(experiment.compositeDelta)),
                ),
                num(format.pValue(experiment.pValue)),
                h('td', { class: `num ${format.signClass(shadowDelta)}` }, format.signed(figure.delta(shadowDelta))),
                h('td', { class: 'delta-text' }, experiment.delta),
              );
            }),
          ),
        ),
      ),
    );
    ctx.mount(root);
    charts.overviewChart(canvas, data, (id) => ctx.navigate(`#/experiments/${id}`));
    if (data.calibrations.length > 0) {
      const calibrationCanvas = h('canvas', { id: 'calibration-chart' });
      calibrationBox.append(calibrationCanvas);
      charts.calibrationChart(calibrationCanvas, data.calibrations);
    }
  }

  // -------------------------------------------------------------- experiment
  async function experiment(ctx, id) {
    const data = await ctx.load(`/api/experiments/${id}`);
    // The study's headline (kloop.yaml task.reportAs), as the overview shows it: a misroute rate is 1 − composite.
    const figure = format.headline(data);
    const root = h('div', { 'data-page': 'experiment', 'data-experiment': data.id });
    const shadowMoved = data.changes.filter((change) => change.partition === 'shadow').length;
    const anchorsMoved = data.changes.filter((change) => change.partition === 'anchor').length;
    root.append(
      h('p', {}, h('a', { href: '#/overview' }, '← overview')),
      h('h1', {}, `Experiment #${data.id} `, reasonBadge(data.reason)),
      h(
        'div',
        { class: 'tiles' },
        tile(
          `${figure.name} (optimization)`,
          format.score(figure.value(data.composite)),
          `incumbent ${format.score(figure.value(data.incumbentComposite))}`,
        ),
        tile(
          `Δ optimization ${figure.name}`,
          format.signed(figure.delta(data.compositeDelta)),
          `p = ${format.pValue(data.pValue)}${data.welchPValue !== null ? ` · Welch p = ${format.pValue(data.welchPValue)}` : ''}`,
        ),
        tile('moved', `${data.changes.length} examples`, `${anchorsMoved} anchor · ${shadowMoved} shadow`),
        tile(
          'executor calls',
          format.number(data.usage.calls),
          `${format.number(data.usage.inputTokens)} in · ${format.number(data.usage.outputTokens)} out tokens · ${format.usd(data.usage.costUsd)}`,
        ),
        tile(
          'versions',
          data.acceptedVersion !== null
            ? `v${data.baseVersion} → v${data.acceptedVersion}`
            : `base v${data.baseVersion}`,
          `run ${data.run} · round ${data.round} · ${data.proposer}`,
        ),
      ),
    );
    root.append(
      card(
        'Delta',
        h('p', { class: 'delta-text' }, data.delta),
        data.rationale ? h('p', { class: 'muted' }, data.rationale) : null,
        data.rebased
          ? h(
              'p',
              { class: 'legend-note', 'data-testid': 'rebased' },
              `Proposed against an older incumbent and rebased onto v${data.baseVersion} (${data.rebased.method === 'three-way-merge' ? 'three-way merge' : `by the ${data.rebased.method}`}${data.rebased.conflicts > 0 ? `, ${data.rebased.conflicts} conflict(s)` : ''}) before it was judged${data.rebased.proposedHash ? `; as proposed its content hash was ${data.rebased.proposedHash.slice(0, 12)}…` : ''}.`,
            )
          : null,
        data.diff
          ? diffTable(
              data.diff,
              `version ${data.baseVersion} (incumbent)`,
              `version ${data.acceptedVersion} (accepted)`,
            )
          : h(
              'p',
              { class: 'muted' },
              `The notebook keeps the text of accepted candidates only; this ${data.decision} candidate is known by its delta above and its content hash ${data.candidateHash.slice(0, 12)}….`,
            ),
      ),
    );
    root.append(
      card(
        `Scores (${figure.name})`,
        table(
          [
            'partition',
            { label: 'incumbent', attributes: { class: 'num' } },
            { label: 'candidate', attributes: { class: 'num' } },
            { label: 'Δ', attributes: { class: 'num' } },
            { label: 'examples compared', attributes: { class: 'num' } },
            { label: 'improved', attributes: { class: 'num' } },
            { label: 'worsened', attributes: { class: 'num' } },
          ],
          ['optimization', 'anchor', 'shadow'].map((partition) => {
            const before = data.incumbentBefore[partition];
            const after = data.candidate[partition];
            const difference = before !== null && after !== null ? after - before : null;
            // Coloured by the composite's direction (green: better), shown in the headline.
            const compared = data.compared[partition];
            return h(
              'tr',
              {},
              h('td', {}, partitionBadge(partition)),
              num(format.score(figure.value(before))),
              num(
                after === null && partition === 'shadow' && !data.shadowConsulted
                  ? 'not consulted'
                  : format.score(figure.value(after)),
              ),
              h('td', { class: `num ${format.signClass(difference)}` }, format.signed(figure.delta(difference))),
              num(compared.examples),
              num(compared.improved),
              num(compared.worsened),
            );
          }),
        ),
        h(
          'p',
          { class: 'legend-note', 'data-testid': 'repeats' },
          data.decision === 'skipped'
            ? `Skipped before evaluation: the incumbent's ${figure.name} as the notebook measured it on the partitions in force.`
            : `Repeats compared: candidate ${data.repeats}, incumbent ${data.incumbentRepeats}${data.incumbentRepeats > data.repeats ? ' (the incumbent is topped up each round it stays the incumbent)' : ''}. ${data.scoreSource === 'evaluations' ? 'Scores from the per-partition evaluations of a notebook recorded before the gate kept its scores.' : data.scoreSource === 'none' ? 'The gate compared no scores for this candidate.' : 'Scores as the gate compared them.'}`,
        ),
      ),
    );
    root.append(
      card(
        'Checks',
        data.evidenceReadable ? null : h('p', { class: 'error' }, 'The stored evidence could not be read.'),
        table(
          [
            'check',
            'verdict',
            { label: 'statistic', attributes: { class: 'num' } },
            { label: 'threshold', attributes: { class: 'num' } },
            'detail',
          ],
          data.checks.map((check) =>
            h(
              'tr',
              { 'data-check': check.name },
              h('td', {}, check.name),
              h('td', { class: check.passed ? 'verdict-pass' : 'verdict-fail' }, check.passed ? 'pass' : 'FAIL'),
              num(format.statistic(check.statistic)),
              num(format.statistic(check.threshold)),
              h('td', {}, check.detail),
            ),
          ),
          { 'data-testid': 'checks' },
        ),
        data.shadowConsulted
          ? null
          : h(
              'p',
              { class: 'legend-note' },
              'The shadow partition was not consulted: the gate stops at the first failing check, and every look at shadow spends a little of its novelty.',
            ),
      ),
    );
    const changesCanvas = h('canvas', { id: 'changes-chart' });
    root.append(
      card(
        `Per-example changes in ${figure.name} (${data.changes.length})`,
        data.changes.length === 0
          ? h('p', { class: 'muted' }, 'No example changed its score.')
          : [
              h(
                'div',
                {
                  class: 'chart-box',
                  style: `height:${Math.min(25, data.changes.filter((change) => change.change !== null).length) * 22 + 70}px`,
                },
                changesCanvas,
              ),
              h(
                'div',
                { class: 'table-scroll' },
                table(
                  [
                    'partition',
                    'example',
                    { label: 'incumbent', attributes: { class: 'num' } },
                    { label: 'candidate', attributes: { class: 'num' } },
                    { label: 'change', attributes: { class: 'num' } },
                    'what changed',
                  ],
                  data.changes.map((change) =>
                    h(
                      'tr',
                      { 'data-example': change.exampleId },
                      h('td', {}, partitionBadge(change.partition)),
                      h('td', { class: 'mono' }, change.exampleId),
                      num(change.before === null ? 'invalid' : format.score(figure.value(change.before))),
                      num(change.after === null ? 'invalid' : format.score(figure.value(change.after))),
                      h(
                        'td',
                        { class: `num ${format.signClass(change.change)}` },
                        change.change === null ? 'validity' : format.signed(figure.delta(change.change)),
                      ),
                      h(
                        'td',
                        {},
                        change.notes.length === 0
                          ? ''
                          : h(
                              'ul',
                              { class: 'notes' },
                              change.notes.map((note) => h('li', {}, note)),
                            ),
                      ),
                    ),
                  ),
                  { 'data-testid': 'example-changes' },
                ),
              ),
            ],
      ),
    );
    ctx.mount(root);
    if (data.changes.some((change) => change.change !== null))
      charts.exampleChangesChart(changesCanvas, data.changes, figure);
  }

  // ---------------------------------------------------------------- versions
  async function versions(ctx, query) {
    const data = await ctx.load('/api/versions');
    const root = h('div', { 'data-page': 'versions' });
    const ids = data.versions.map((version) => version.id);
    const seed = data.versions.find((version) => version.source === 'seed');
    const a = Number(query.get('a')) || (seed ? seed.id : ids[0]);
    // Default: the seed against the active version, or against the newest when the seed is active.
    const b =
      Number(query.get('b')) ||
      (data.activeVersion !== null && data.activeVersion !== a ? data.activeVersion : ids[ids.length - 1]);
    root.append(h('h1', {}, 'Versions'));
    if (ctx.notice) root.append(ctx.notice);
    if (ids.length === 0) {
      root.append(
        card(
          null,
          h(
            'p',
            { class: 'muted', 'data-testid': 'no-versions' },
            'No version yet: the first `kloop run` stores the seed artifact as version 1, and each accepted candidate as the next. This page follows it as it goes.',
          ),
        ),
      );
      ctx.mount(root);
      return;
    }
    root.append(
      card(
        `${data.versions.length} version${data.versions.length === 1 ? '' : 's'} · version ${data.activeVersion ?? '—'} active`,
        h(
          'div',
          { class: 'table-scroll' },
          table(
            [
              'version',
              'source',
              'created',
              'from',
              { label: 'optimization', attributes: { class: 'num' } },
              { label: 'anchor', attributes: { class: 'num' } },
              { label: 'shadow', attributes: { class: 'num' } },
              '',
            ],
            [...data.versions].reverse().map((version) =>
              h(
                'tr',
                { 'data-version': version.id },
                h(
                  'td',
                  {},
                  `v${version.id} `,
                  version.active
                    ? h('span', { class: 'pill', style: 'background:#1a9850;color:#fff' }, 'active')
                    : null,
                ),
                h('td', {}, version.source),
                h('td', {}, format.time(version.createdAt)),
                h(
                  'td',
                  {},
                  version.experimentId !== null
                    ? h('a', { href: `#/experiments/${version.experimentId}` }, `#${version.experimentId} `)
                    : '',
                  version.delta
                    ? h('span', { class: 'delta-text' }, version.delta)
                    : version.parentId !== null
                      ? `after v${version.parentId}`
                      : '',
                ),
                num(format.score(version.composites.optimization)),
                num(format.score(version.composites.anchor)),
                num(format.score(version.composites.shadow)),
                h(
                  'td',
                  {},
                  version.active || ctx.report
                    ? null
                    : h(
                        'button',
                        {
                          class: version.id < (data.activeVersion || 0) ? 'danger' : '',
                          'data-activate': version.id,
                          onclick: () =>
                            ctx.decide({
                              title: `Activate version ${version.id}?`,
                              text: `${version.id < (data.activeVersion || 0) ? 'This rolls the active version back' : 'This moves the active version'} from v${data.activeVersion} to v${version.id}. The runtime (kloop build) uses it at once and the next kloop run continues from it. The move is recorded in the notebook with your name.`,
                              confirm: `Activate v${version.id}`,
                              submit: (decision) => ctx.post(`/api/versions/${version.id}/activate`, decision),
                              done: (result) =>
                                `Version ${result.versionId} is active${result.rollback ? ` (rolled back from v${result.previousVersionId})` : ''}.`,
                            }),
                        },
                        'Activate…',
                      ),
                ),
              ),
            ),
          ),
        ),
      ),
    );
    const pickA = h(
      'select',
      { id: 'diff-a', 'aria-label': 'left version' },
      ids.map((id) => h('option', { value: id, selected: id === a }, `v${id}`)),
    );
    const pickB = h(
      'select',
      { id: 'diff-b', 'aria-label': 'right version' },
      ids.map((id) => h('option', { value: id, selected: id === b }, `v${id}`)),
    );
    const change = () => ctx.navigate(`#/versions?a=${pickA.value}&b=${pickB.value}`);
    pickA.addEventListener('change', change);
    pickB.addEventListener('change', change);
    const diffBox = h('div', { id: 'diff-box' });
    root.append(
      card(
        'Compare two versions',
        h(
          'div',
          { class: 'toolbar' },
          'left',
          pickA,
          'right',
          pickB,
          h('button', { onclick: () => ctx.navigate(`#/versions?a=${b}&b=${a}`) }, 'swap'),
        ),
        diffBox,
      ),
    );
    try {
      const diff = await ctx.load(`/api/diff?a=${a}&b=${b}`);
      diffBox.append(diffTable(diff, `version ${a}`, `version ${b}`));
    } catch (error) {
      diffBox.append(h('p', { class: 'muted' }, error.message));
    }
    ctx.mount(root);
  }

  // ------------------------------------------------------------------ corpus
  async function corpus(ctx) {
    const data = await ctx.load('/api/corpus');
    const root = h('div', { 'data-page': 'corpus' });
    const sizesCanvas = h('canvas', { id: 'partition-sizes-chart' });
    const exposuresCanvas = h('canvas', { id: 'exposures-chart' });
    root.append(
      h('h1', {}, 'Corpus'),
      h(
        'div',
        { class: 'tiles' },
        ['optimization', 'anchor', 'shadow'].map((partition) =>
          tile(
            partition,
            format.number(data.partitions[partition] || 0),
            partition === 'shadow' && data.policy
              ? `graduate after ${data.policy.graduateAfterDecisions} decisions · at most ${data.policy.maxShadowExposures}`
              : '',
          ),
        ),
        tile(
          'moves',
          format.number(data.events.length),
          Object.entries(data.counts)
            .filter(([kind]) => kind !== 'initial')
            .map(([kind, count]) => `${kind} ${count}`)
            .join(' · ') || 'none since the start',
        ),
      ),
      h(
        'div',
        { class: 'grid halves' },
        card(
          'Partition sizes over experiments',
          data.sizes.length === 0
            ? h('p', { class: 'muted' }, 'No corpus lifecycle recorded yet (the first run records it).')
            : h('div', { class: 'chart-box small' }, sizesCanvas),
        ),
        card(
          `Shadow exposures (${data.shadow.length} examples)`,
          data.shadow.length === 0
            ? h('p', { class: 'muted' }, 'No shadow examples.')
            : h('div', { class: 'chart-box', style: `height:${data.shadow.length * 17 + 90}px` }, exposuresCanvas),
          h(
            'p',
            { class: 'legend-note' },
            'Each gate decision that consulted shadow spends a little of its novelty; examples graduate into the optimization partition after serving, and new admitted examples take their place.',
          ),
        ),
      ),
      card(
        'Graduations, rotations and admissions',
        data.events.length === 0
          ? h('p', { class: 'muted' }, 'No move since the initial placement.')
          : h(
              'div',
              { class: 'table-scroll' },
              table(
                ['when', 'after experiment', 'example', 'move', 'from → to', 'reason'],
                [...data.events]
                  .reverse()
                  .map((event) =>
                    h(
                      'tr',
                      {},
                      h('td', {}, format.time(event.createdAt)),
                      h('td', {}, event.experimentId === null ? '—' : `#${event.experimentId}`),
                      h('td', { class: 'mono' }, event.exampleId || '—'),
                      h('td', {}, event.kind),
                      h('td', {}, `${event.from || '—'} → ${event.to || '—'}`),
                      h('td', {}, event.reason),
                    ),
                  ),
              ),
            ),
      ),
    );
    ctx.mount(root);
    if (data.sizes.length > 0) charts.partitionSizesChart(sizesCanvas, data.sizes);
    if (data.shadow.length > 0) charts.exposuresChart(exposuresCanvas, data.shadow, data.policy);
  }

  // ------------------------------------------------------------------ review
  function evidenceView(evidence) {
    if (evidence && typeof evidence === 'object' && Array.isArray(evidence.checks)) {
      return h(
        'ul',
        { class: 'notes' },
        evidence.checks.map((check) =>
          h(
            'li',
            {},
            h('span', { class: check.passed ? 'verdict-pass' : 'verdict-fail' }, check.passed ? 'pass ' : 'FAIL '),
            `${check.name}: ${check.detail || ''}`,
          ),
        ),
      );
    }
    return evidence === null || evidence === undefined
      ? null
      : h('pre', { class: 'block' }, JSON.stringify(evidence, null, 2));
  }
  async function review(ctx, query) {
    const data = await ctx.load('/api/review');
    const status = query.get('status') || 'pending';
    const items = status === 'all' ? data.items : data.items.filter((item) => item.status === status);
    const root = h('div', { 'data-page': 'review' });
    root.append(h('h1', {}, 'Review queue'));
    if (ctx.notice) root.append(ctx.notice);
    root.append(
      h(
        'div',
        { class: 'toolbar' },
        ['pending', 'approved', 'rejected', 'all'].map((name) =>
          name === status
            ? h('strong', {}, `${name} (${name === 'all' ? data.items.length : data.counts[name] || 0})`)
            : h(
                'a',
                { href: `#/review?status=${name}` },
                `${name} (${name === 'all' ? data.items.length : data.counts[name] || 0})`,
              ),
        ),
      ),
      h(
        'p',
        { class: 'muted' },
        "Loop A candidates (end-to-end) and Loop C/D findings (pattern mining, production feedback) wait here for a human decision: they never change the prompt on their own. Approving an artifact makes it the active version; approving a pattern writes it to the study's patterns/ folder; approving an example sends it to corpus admission (shadow first).",
      ),
    );
    if (items.length === 0)
      root.append(
        card(
          null,
          h('p', { class: 'muted' }, status === 'pending' ? 'Nothing waits for review.' : `No ${status} items.`),
        ),
      );
    for (const item of items) {
      const payload = item.payload || {};
      root.append(
        h(
          'div',
          { class: 'item-card', 'data-review-item': item.id },
          h(
            'div',
            { class: 'head' },
            h('span', { class: 'pill' }, `#${item.id}`),
            h('span', { class: 'pill' }, `${item.kind} · ${item.source}`),
            h('span', { class: 'title' }, item.title),
            h('span', { class: 'pill' }, item.status),
            item.status === 'pending' && !ctx.report
              ? h(
                  'span',
                  { class: 'actions' },
                  ['approve', 'reject'].map((action) =>
                    h(
                      'button',
                      {
                        class: action === 'approve' ? 'primary' : 'danger',
                        'data-review-action': action,
                        onclick: () =>
                          ctx.decide({
                            title: `${action === 'approve' ? 'Approve' : 'Reject'} review item #${item.id}?`,
                            text: `${item.title}. Your name is recorded with the decision.`,
                            confirm: action === 'approve' ? 'Approve' : 'Reject',
                            submit: (decision) => ctx.post(`/api/review/${item.id}/${action}`, decision),
                            done: (result) =>
                              `Review item #${result.item.id} ${result.item.status} by ${result.item.decidedBy}.`,
                          }),
                      },
                      action === 'approve' ? 'Approve…' : 'Reject…',
                    ),
                  ),
                )
              : null,
          ),
          h(
            'div',
            { class: 'muted' },
            `queued ${format.time(item.createdAt)}${item.decidedBy ? ` · ${item.status} by ${item.decidedBy} at ${format.time(item.decidedAt)}${item.note ? `: ${item.note}` : ''}` : ''}`,
          ),
          typeof payload.delta === 'string' ? h('p', { class: 'delta-text' }, payload.delta) : null,
          typeof payload.yaml === 'string'
            ? h('details', {}, h('summary', {}, 'pattern YAML'), h('pre', { class: 'block' }, payload.yaml))
            : null,
          payload.example !== undefined
            ? h(
                'details',
                {},
                h('summary', {}, 'example'),
                h('pre', { class: 'block' }, JSON.stringify(payload.example, null, 2)),
              )
            : null,
          h('details', {}, h('summary', {}, 'evidence'), evidenceView(item.evidence)),
        ),
      );
    }
    ctx.mount(root);
  }

  // ----------------------------------------------------------------- signals
  async function signals(ctx) {
    const root = h('div', { 'data-page': 'signals' });
    root.append(h('h1', {}, 'Signals (Loop D)'));
    let data;
    try {
      data = await ctx.load('/api/signals');
    } catch (error) {
      root.append(card(null, h('p', { class: 'muted' }, error.message)));
      ctx.mount(root);
      return;
    }
    const methodsCanvas = h('canvas', { id: 'methods-chart' });
    root.append(
      h(
        'div',
        { class: 'tiles' },
        tile('window', `${data.window.days} days`, `${format.time(data.window.from)} → ${format.time(data.window.to)}`),
        tile('signals', format.number(data.signals), `${format.number(data.lowConfidence)} low-confidence`),
        tile(
          'clusters',
          format.number(data.clusters.length),
          `minimum size ${data.settings.minClusterSize}; ${data.belowMinimum.clusters} smaller shapes (${data.belowMinimum.signals} signals) not reported`,
        ),
      ),
      h(
        'div',
        { class: 'grid two' },
        card(
          'Clusters of low-confidence assemblies',
          data.clusters.length === 0
            ? h(
                'p',
                { class: 'muted' },
                data.signals === 0
                  ? 'No signals in the window: production calls (kloop build, the runtime API, kloop serve, kloop signals ingest) record them.'
                  : 'No cluster reaches the minimum size.',
              )
            : h(
                'div',
                { class: 'table-scroll' },
                table(
                  [
                    'shape',
                    { label: 'size', attributes: { class: 'num' } },
                    { label: 'share', attributes: { class: 'num' } },
                    { label: 'mean confidence', attributes: { class: 'num' } },
                    'uncovered entities',
                    'uncovered behaviours',
                    'patterns used',
                    'last seen',
                  ],
                  data.clusters.map((cluster) =>
                    h(
                      'tr',
                      {},
                      h(
                        'td',
                        { class: 'mono' },
                        `${cluster.appClass} · ${cluster.hasCommitments ? 'commitments' : 'no commitments'} · ${cluster.entityCountBucket}`,
                      ),
                      num(cluster.size),
                      num(`${(cluster.share * 100).toFixed(0)}%`),
                      num(format.score(cluster.meanConfidence)),
                      h(
                        'td',
                        {},
                        cluster.uncoveredEntities.map((entry) => `${entry.name} (${entry.count})`).join(', '),
                      ),
                      h(
                        'td',
                        {},
                        cluster.uncoveredBehaviors.map((entry) => `${entry.name} (${entry.count})`).join(', '),
                      ),
                      h('td', {}, cluster.patterns.map((entry) => entry.name).join(', ')),
                      h('td', {}, format.time(cluster.lastSeen)),
                    ),
                  ),
                ),
              ),
        ),
        card('Assembly methods', h('div', { class: 'chart-box small' }, methodsCanvas)),
      ),
      card(
        'Recurring gaps',
        data.recurringGaps.length === 0
          ? h('p', { class: 'muted' }, 'None.')
          : table(
              [
                'kind',
                'name',
                { label: 'signals', attributes: { class: 'num' } },
                { label: 'share', attributes: { class: 'num' } },
                'clusters',
              ],
              data.recurringGaps.map((gap) =>
                h(
                  'tr',
                  {},
                  h('td', {}, gap.kind),
                  h('td', {}, gap.name),
                  num(gap.count),
                  num(`${(gap.share * 100).toFixed(0)}%`),
                  h('td', { class: 'mono' }, gap.clusters.join(', ')),
                ),
              ),
            ),
      ),
      card(
        'Candidate patterns and deprecation candidates',
        data.candidatePatterns.length === 0
          ? h('p', { class: 'muted' }, 'No candidate pattern.')
          : h(
              'ul',
              {},
              data.candidatePatterns.map((sketch) =>
                h(
                  'li',
                  {},
                  `${sketch.appClass} (${sketch.size} signals): ${sketch.entities.map((entry) => entry.name).join(', ') || '—'}; behaviours ${sketch.behaviors.map((entry) => entry.name).join(', ') || '—'}${sketch.draft ? ` → draft ${sketch.draft.id}` : ''}`,
                ),
              ),
            ),
        h(
          'p',
          { class: 'muted' },
          `Unused patterns: ${data.deprecationCandidates.patterns.join(', ') || 'none'} · unused sections: ${data.deprecationCandidates.sections.join(', ') || 'none'}${data.deprecationCandidates.notes.length ? ` (${data.deprecationCandidates.notes.join('; ')})` : ''}`,
        ),
        h(
          'p',
          { class: 'legend-note' },
          'Evidence only: `kloop signals report --enqueue` sends the candidate patterns to the review queue; nothing here edits the prompt.',
        ),
      ),
    );
    ctx.mount(root);
    charts.countsChart(methodsCanvas, data.methods, '#7b3294');
  }

  Kloop.pages = { overview, experiment, versions, corpus, review, signals, diffTable };
})();
