/**
 * How the signal analysis (./analysis.ts) groups signals: the rolling
 * window, entity-count buckets, low confidence, and the cluster key of a
 * shape (app class, commitments, entity-count bucket).
 */
import type { AnalysisSettings, SignalWindow } from './analysis-types.ts';
import type { StoredSignal } from './signal.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The window `(now − days, now]`. */
export function signalWindow(now: Date, windowDays: number): SignalWindow {
  return { from: new Date(now.getTime() - windowDays * DAY_MS).toISOString(), to: now.toISOString(), days: windowDays };
}

/** Labels of the buckets of increasing inclusive upper bounds: `[3, 6, 10]` → `0`, `1-3`, `4-6`, `7-10`, `11+`. */
export function entityCountBucketLabels(bounds: readonly number[]): string[] {
  const labels = ['0'];
  let lower = 1;
  for (const bound of bounds) {
    labels.push(lower === bound ? String(bound) : `${lower}-${bound}`);
    lower = bound + 1;
  }
  labels.push(`${lower}+`);
  return labels;
}

/** The bucket label of an entity count (see {@link entityCountBucketLabels}). */
export function entityCountBucket(entityCount: number, bounds: readonly number[]): string {
  if (entityCount <= 0) return '0';
  let lower = 1;
  for (const bound of bounds) {
    if (entityCount <= bound) return lower === bound ? String(bound) : `${lower}-${bound}`;
    lower = bound + 1;
  }
  return `${lower}+`;
}

/** Whether a signal is low-confidence under the settings. */
export function isLowConfidence(
  signal: Pick<StoredSignal, 'assemblyMethod' | 'confidence'>,
  settings: Pick<AnalysisSettings, 'confidenceThreshold' | 'lowConfidenceMethods'>,
): boolean {
  return (
    settings.lowConfidenceMethods.includes(signal.assemblyMethod) || signal.confidence < settings.confidenceThreshold
  );
}

/** The cluster key of a shape. */
export function clusterKey(appClass: string, hasCommitments: boolean, bucket: string): string {
  return `${appClass}|${hasCommitments ? 'commitments' : 'no-commitments'}|${bucket}`;
}
