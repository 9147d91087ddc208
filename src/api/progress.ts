/**
 * The library's progress listener: the run's events as one line each, the
 * way `kloop run` prints its progress, on stderr by default. `optimize()`
 * prints nothing unless it is given a listener; this is the one to give:
 *
 * ```js
 * import { createStudy, printProgress } from 'kloop';
 * const study = await createStudy({ ..., onEvent: printProgress() });
 * ```
 *
 * @module
 */
import type { RunEvent } from '../loop/run-study.ts';

function score(value: number | null): string {
  return value === null ? '—' : value.toFixed(4);
}

/** A delta on one line: its lines joined by " / ", at most 200 characters. */
function oneLine(delta: string): string {
  const line = delta
    .split('\n')
    .filter((part) => part.trim() !== '')
    .join(' / ');
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * The line of one event (`kloop run`'s wording, shortened).
 *
 * @example
 * ```ts
 * progressLine({ type: 'round-end', round: 1, accepted: 1, refused: 2, best: 0.8, diversity: { mean: 1, min: 1 } });
 * // 'round 1 done: 1 accepted, 2 refused; best optimization composite 0.8000'
 * ```
 */
export function progressLine(event: RunEvent): string {
  switch (event.type) {
    case 'start':
      return `run ${event.runId}: evaluator ${event.fingerprint}, ${event.experiments} experiments so far, incumbent version ${event.incumbent}`;
    case 'baseline':
      return `baseline: optimization ${score(event.scores.optimization)}, anchor ${score(event.scores.anchor)}, shadow ${score(event.scores.shadow)}`;
    case 'round':
      return `round ${event.round}: ${event.candidates} candidates proposed${event.failures > 0 ? `, ${event.failures} failed (${(event.failureReasons ?? []).join('; ')})` : ''}${(event.skipped ?? 0) > 0 ? `, ${event.skipped} skipped` : ''}`;
    case 'decision':
      return `  #${event.experimentId} ${event.decision} (${event.reason})${event.optimization !== null ? ` [optimization ${score(event.optimization)}]` : ''}: ${oneLine(event.delta)}`;
    case 'round-end':
      return `round ${event.round} done: ${event.accepted} accepted, ${event.refused} refused; best optimization composite ${score(event.best)}`;
    case 'stop':
      return `stopped: ${event.reason} — ${event.detail}`;
  }
}

/**
 * A listener for `createStudy({ onEvent })` that writes each event's
 * {@link progressLine}.
 *
 * @param write where a line goes (without its newline). Default: stderr.
 */
export function printProgress(
  write: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
): (event: RunEvent) => void {
  return (event) => write(progressLine(event));
}
