/* kloop view: DOM and number helpers, shared by the pages (plain script, no build step). */
(() => {
  const Kloop = (window.Kloop = window.Kloop || {});

  /**
   * Creates an element: h('td', { class: 'num' }, 'text', child). Strings become
   * text nodes (never HTML), null and false are skipped, arrays are flattened.
   */
  function h(tag, attributes, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
      else if (name === 'dataset') Object.assign(element.dataset, value);
      else element.setAttribute(name, value === true ? '' : String(value));
    }
    append(element, children);
    return element;
  }
  function append(element, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      element.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return element;
  }

  /** A score in [0, 1] with 4 decimals; "—" when missing (never 0). */
  function score(value) {
    return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(4) : '—';
  }
  /** A signed difference with 4 decimals. */
  function signed(value) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
    return (value > 0 ? '+' : value < 0 ? '−' : '±') + Math.abs(value).toFixed(4);
  }
  function pValue(value) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
    return value < 0.0001 ? value.toExponential(1) : value.toFixed(4);
  }
  function number(value) {
    return typeof value === 'number' && Number.isFinite(value) ? value.toLocaleString('en-US') : '—';
  }
  function usd(value) {
    return typeof value === 'number' && Number.isFinite(value) ? `$${value.toFixed(value < 1 ? 4 : 2)}` : '—';
  }
  function statistic(value) {
    if (value === null || value === undefined) return '—';
    if (typeof value !== 'number') return String(value);
    return Math.abs(value) >= 1000 || Number.isInteger(value)
      ? String(value)
      : value.toPrecision(4).replace(/\.?0+$/, '');
  }
  function time(iso) {
    if (!iso) return '—';
    const date = new Date(iso);
    return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  }
  function signClass(value) {
    return typeof value === 'number' ? (value > 0 ? 'up' : value < 0 ? 'down' : '') : '';
  }

  /** Colours of decisions and refusal reasons (ColorBrewer RdYlGn / Set1-like, readable on white). */
  const REASON_COLORS = {
    accepted: '#1a9850',
    specialization: '#f46d43',
    not_significant: '#8c96a0',
    below_margin: '#c3c9cf',
    anchor_regression: '#d73027',
    invalid: '#762a83',
    constraint: '#8c510a',
    evaluation_failed: '#222222',
    duplicate: '#9ecae1',
  };
  const REASON_LABELS = {
    accepted: 'accepted',
    specialization: 'refused: specialization (shadow did not confirm)',
    not_significant: 'refused: not significant',
    below_margin: 'refused: below the margin τ',
    anchor_regression: 'refused: anchor regression',
    invalid: 'refused: more invalid outputs',
    constraint: 'refused: constraint broken',
    evaluation_failed: 'refused: evaluation failed',
    duplicate: 'skipped: duplicate',
  };
  function reasonColor(reason) {
    return REASON_COLORS[reason] || '#5d6d7e';
  }
  function reasonBadge(reason) {
    return h(
      'span',
      { class: 'badge', style: `background:${reasonColor(reason)}`, title: REASON_LABELS[reason] || reason },
      reason,
    );
  }
  const PARTITION_COLORS = { optimization: '#2457a6', anchor: '#1b9e77', shadow: '#7b3294' };

  /**
   * The text cut to at most `max` characters (code points), "…" included, on
   * a whole grapheme cluster (Intl.Segmenter): an emoji is never split.
   */
  const graphemes =
    typeof Intl !== 'undefined' && Intl.Segmenter ? new Intl.Segmenter('en', { granularity: 'grapheme' }) : null;
  function cut(text, max) {
    const value = String(text);
    if ([...value].length <= max) return value;
    const room = max - 1;
    let used = 0;
    let end = 0;
    const pieces = graphemes ? Array.from(graphemes.segment(value), (entry) => entry.segment) : [...value];
    for (const piece of pieces) {
      const size = [...piece].length;
      if (used + size > room) break;
      used += size;
      end += piece.length;
    }
    return `${value.slice(0, end)}…`;
  }

  Kloop.h = h;
  Kloop.append = append;
  /**
   * The study's headline figure (overview.headline, from kloop.yaml task.reportAs): its name, a composite
   * shown in it (1 − composite for a complement such as the misroute rate) and a composite difference in it.
   */
  function headline(overview) {
    const figure = (overview && overview.headline) || { name: 'composite', complement: false };
    return {
      name: figure.name,
      complement: figure.complement === true,
      value: (composite) => (figure.complement === true && typeof composite === 'number' ? 1 - composite : composite),
      delta: (difference) => (figure.complement === true && typeof difference === 'number' ? -difference : difference),
    };
  }

  Kloop.format = { score, signed, pValue, number, usd, statistic, time, signClass, cut, headline };
  Kloop.colors = { REASON_COLORS, REASON_LABELS, PARTITION_COLORS, reasonColor, reasonBadge };
})();
