/* kloop view: the charts, drawn by Chart.js (the global `Chart` of its UMD bundle). */
(() => {
  const Kloop = (window.Kloop = window.Kloop || {});
  const { REASON_COLORS, REASON_LABELS, PARTITION_COLORS, reasonColor } = Kloop.colors;
  const format = Kloop.format;

  /** Charts of the current page, destroyed when the page is left or redrawn. */
  const live = new Map();
  function mount(canvas, config) {
    const previous = live.get(canvas.id);
    if (previous) previous.destroy();
    const chart = new Chart(canvas, config);
    live.set(canvas.id, chart);
    return chart;
  }
  function destroyAll() {
    for (const chart of live.values()) chart.destroy();
    live.clear();
  }

  const baseOptions = () => ({
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    interaction: { mode: 'nearest', intersect: true },
    plugins: { legend: { position: 'bottom', labels: { boxWidth: 12, usePointStyle: true } } },
  });

  /**
   * The overview chart: the incumbent's composite per partition after each
   * experiment (stepped lines) and one point per evaluated candidate, at its
   * optimization composite, coloured by decision or refusal reason.
   * Clicking a point opens its experiment.
   */
  function overviewChart(canvas, overview, onSelect) {
    const datasets = [];
    // In the study's headline (kloop.yaml task.reportAs), as the CLI reports it: a misroute rate is 1 − composite.
    const figure = format.headline(overview);
    for (const partition of ['optimization', 'anchor', 'shadow']) {
      datasets.push({
        type: 'line',
        label: `incumbent · ${partition}`,
        kloopRole: 'incumbent',
        data: overview.trail.map((point) => ({
          x: point.experimentId,
          y: figure.value(point.composites[partition]),
          version: point.versionId,
          kind: point.kind,
        })),
        borderColor: PARTITION_COLORS[partition],
        backgroundColor: PARTITION_COLORS[partition],
        borderWidth: 2,
        borderDash: partition === 'shadow' ? [6, 3] : partition === 'anchor' ? [2, 2] : [],
        stepped: 'before',
        pointRadius: 0,
        pointHitRadius: 4,
        spanGaps: true,
        order: 2,
      });
    }
    const byReason = new Map();
    for (const experiment of overview.experiments) {
      if (experiment.composite === null) continue; // skipped before evaluation, or nothing valid: no score to plot
      if (!byReason.has(experiment.reason)) byReason.set(experiment.reason, []);
      byReason.get(experiment.reason).push({ x: experiment.id, y: figure.value(experiment.composite), experiment });
    }
    const order = Object.keys(REASON_COLORS);
    const reasons = [...byReason.keys()].sort(
      (a, b) => order.indexOf(a) + 100 * (order.indexOf(a) < 0) - (order.indexOf(b) + 100 * (order.indexOf(b) < 0)),
    );
    for (const reason of reasons) {
      datasets.push({
        type: 'scatter',
        label: REASON_LABELS[reason] || reason,
        kloopRole: 'candidates',
        kloopReason: reason,
        data: byReason.get(reason),
        backgroundColor: reasonColor(reason),
        borderColor: reason === 'accepted' ? '#0b4d27' : 'rgba(0,0,0,0.35)',
        borderWidth: 1,
        pointRadius: reason === 'accepted' ? 6 : 4.5,
        pointHoverRadius: 8,
        pointStyle: reason === 'accepted' ? 'rectRot' : 'circle',
        order: 1,
      });
    }
    const moves = overview.corpusMoves || [];
    if (moves.length > 0) {
      // Where the partitions changed between rounds: the incumbent's lines step there without a decision.
      const level = (x) => {
        const next = overview.trail.find((point) => point.experimentId > x);
        return figure.value((next || overview.trail[overview.trail.length - 1]).composites.optimization);
      };
      datasets.push({
        type: 'scatter',
        label: 'corpus moved (graduation, rotation, admission)',
        kloopRole: 'corpus',
        data: moves.map((move) => ({ x: move.afterExperiment + 0.5, y: level(move.afterExperiment), move })),
        pointStyle: 'triangle',
        pointRadius: 7,
        backgroundColor: 'rgba(255,255,255,0.9)',
        borderColor: '#b9770e',
        borderWidth: 2,
        order: 0,
      });
    }
    const options = baseOptions();
    options.scales = {
      x: {
        type: 'linear',
        title: { display: true, text: 'experiment' },
        ticks: { precision: 0 },
        min: 0,
        max: Math.max(1, ...overview.trail.map((point) => point.experimentId)) + 0.5,
      },
      y: { title: { display: true, text: `${figure.name} (0–1)${figure.complement ? ', lower is better' : ''}` } },
    };
    options.plugins.tooltip = {
      callbacks: {
        title: (items) => {
          const raw = items[0] && items[0].raw;
          if (raw && raw.experiment) return `experiment #${raw.experiment.id} · ${raw.experiment.reason}`;
          if (raw && raw.move) return `corpus moved after experiment #${raw.move.afterExperiment}`;
          if (!items[0]) return '';
          if (raw && raw.kind === 'active') return `now: version ${raw.version} activated by hand`;
          return raw && raw.kind === 'baseline' ? 'baseline (seed)' : `after experiment #${items[0].parsed.x}`;
        },
        label: (item) => {
          const raw = item.raw;
          if (raw && raw.move)
            return `${Object.entries(raw.move.kinds)
              .map(([kind, count]) => `${count} ${kind.replace('_', ' ')}`)
              .join(', ')} (see Corpus)`;
          if (raw && raw.experiment) {
            const e = raw.experiment;
            return [
              format.cut(e.delta, 78),
              `${figure.name} ${format.score(figure.value(e.composite))}  Δ ${format.signed(figure.delta(e.compositeDelta))}  p ${format.pValue(e.pValue)}`,
            ];
          }
          return `${item.dataset.label}: ${format.score(item.parsed.y)} (version ${raw && raw.version})`;
        },
      },
    };
    options.onClick = (_event, elements, chart) => {
      const hit = elements.find((element) => chart.data.datasets[element.datasetIndex].kloopRole === 'candidates');
      if (hit) onSelect(chart.data.datasets[hit.datasetIndex].data[hit.index].experiment.id);
    };
    options.onHover = (event, elements, chart) => {
      const over = elements.some((element) => chart.data.datasets[element.datasetIndex].kloopRole === 'candidates');
      event.native.target.style.cursor = over ? 'pointer' : 'default';
    };
    return mount(canvas, { data: { datasets }, options });
  }

  /** Calibration history: noise SD and τ (left axis) and Cohen's d (right axis) per calibration. */
  function calibrationChart(canvas, calibrations) {
    const labels = calibrations.map((record) => `#${record.id} ${record.createdAt.slice(0, 10)}`);
    const options = baseOptions();
    options.interaction = { mode: 'index', intersect: false };
    options.scales = {
      y: { title: { display: true, text: 'composite units' }, beginAtZero: true },
      d: {
        position: 'right',
        title: { display: true, text: "Cohen's d" },
        grid: { drawOnChartArea: false },
        beginAtZero: true,
      },
    };
    return mount(canvas, {
      type: 'line',
      data: {
        labels,
        datasets: [
          {
            label: 'noise SD',
            data: calibrations.map((record) => record.noiseSd),
            borderColor: '#2457a6',
            backgroundColor: '#2457a6',
            yAxisID: 'y',
          },
          {
            label: 'τ (threshold)',
            data: calibrations.map((record) => record.threshold),
            borderColor: '#f46d43',
            backgroundColor: '#f46d43',
            borderDash: [5, 3],
            yAxisID: 'y',
          },
          {
            label: "Cohen's d",
            data: calibrations.map((record) => record.cohensD),
            borderColor: '#1b9e77',
            backgroundColor: '#1b9e77',
            yAxisID: 'd',
          },
        ],
      },
      options,
    });
  }

  /**
   * Horizontal bars: the largest per-example changes of an experiment in the study's headline figure
   * (format.headline), coloured by partition (right: the figure rose; better for a composite, worse for a
   * complement such as a misroute rate).
   */
  function exampleChangesChart(canvas, changes, figure) {
    const shown = changes.filter((change) => change.change !== null).slice(0, 25);
    const options = baseOptions();
    options.indexAxis = 'y';
    options.plugins.legend = { display: false };
    options.scales = {
      x: {
        title: {
          display: true,
          text: `change in ${figure.name} (candidate − incumbent)${figure.complement ? ', lower is better' : ''}`,
        },
      },
    };
    return mount(canvas, {
      type: 'bar',
      data: {
        labels: shown.map((change) => `${change.exampleId} (${change.partition})`),
        datasets: [
          {
            label: 'change',
            data: shown.map((change) => figure.delta(change.change)),
            backgroundColor: shown.map((change) => PARTITION_COLORS[change.partition] || '#5d6d7e'),
          },
        ],
      },
      options,
    });
  }

  /** Partition sizes over experiments, replayed from the corpus moves. */
  function partitionSizesChart(canvas, sizes) {
    const options = baseOptions();
    options.scales = {
      x: {
        type: 'linear',
        min: 0,
        title: { display: true, text: 'experiment (last decided when the moves happened)' },
        ticks: { precision: 0 },
      },
      y: { beginAtZero: true, title: { display: true, text: 'examples' } },
    };
    return mount(canvas, {
      type: 'line',
      data: {
        datasets: ['optimization', 'anchor', 'shadow'].map((partition) => ({
          label: partition,
          data: sizes.map((point) => ({ x: point.experimentId, y: point.sizes[partition] })),
          borderColor: PARTITION_COLORS[partition],
          backgroundColor: PARTITION_COLORS[partition],
          stepped: 'before',
        })),
      },
      options,
    });
  }

  /** Shadow exposures per example (horizontal bars), with the graduation and exposure limits as lines. */
  function exposuresChart(canvas, shadow, policy) {
    const options = baseOptions();
    options.indexAxis = 'y';
    options.scales = {
      x: {
        beginAtZero: true,
        title: { display: true, text: 'gate decisions that consulted shadow while it was there' },
        suggestedMax: policy ? policy.graduateAfterDecisions : undefined,
      },
      y: { ticks: { autoSkip: false, font: { size: 11 } } },
    };
    const datasets = [
      { type: 'bar', label: 'exposures', data: shadow.map((member) => member.exposures), backgroundColor: '#7b3294' },
    ];
    if (policy) {
      datasets.push({
        type: 'line',
        label: `graduates after ${policy.graduateAfterDecisions}`,
        data: shadow.map(() => policy.graduateAfterDecisions),
        borderColor: '#1a9850',
        borderDash: [6, 3],
        pointRadius: 0,
        indexAxis: 'y',
      });
    }
    return mount(canvas, { data: { labels: shadow.map((member) => member.exampleId), datasets }, options });
  }

  /** A plain bar chart of counts by name. */
  function countsChart(canvas, counts, color) {
    const entries = Object.entries(counts);
    const options = baseOptions();
    options.plugins.legend = { display: false };
    options.scales = { y: { beginAtZero: true, ticks: { precision: 0 } } };
    return mount(canvas, {
      type: 'bar',
      data: {
        labels: entries.map(([name]) => name),
        datasets: [{ data: entries.map(([, value]) => value), backgroundColor: color || '#2457a6' }],
      },
      options,
    });
  }

  Kloop.charts = {
    overviewChart,
    calibrationChart,
    exampleChangesChart,
    partitionSizesChart,
    exposuresChart,
    countsChart,
    destroyAll,
    live,
    mount,
    baseOptions,
  };
})();
