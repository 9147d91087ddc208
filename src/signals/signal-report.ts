/**
 * The Loop D report over the study database (`kloop signals report`): reads
 * the signals of the rolling window page by page, folds them into the
 * analysis (`analysis.ts`) and drafts a candidate pattern per cluster that
 * has typical uncovered entities or behaviours (`candidate-pattern.ts`).
 * Read-only: it changes nothing; `governance.ts` sends findings for review.
 */
import type { Pattern } from '../assembly/pattern.ts';
import type { StudyDatabase } from '../storage/study-database.ts';
import { playbookSections } from '../tasks/intent/offline/playbook.ts';
import type { AnalysisSettings, CandidatePatternSketch, SignalAnalysis } from './analysis.ts';
import { createSignalAnalyzer, signalWindow } from './analysis.ts';
import type { PatternDraft, RoleIndex } from './candidate-pattern.ts';
import { draftPattern } from './candidate-pattern.ts';
import { forEachSignalInRange } from './signal-store.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../config/signals-config.ts';

/** A candidate pattern of Loop D: the sketch and its draft (null when nothing can be drafted). */
export interface SignalCandidatePattern extends CandidatePatternSketch {
  draft: PatternDraft | null;
  /** The pattern the draft extends (behaviour-only gaps), if any. */
  extends: string | null;
}

/** The Loop D report (JSON of `kloop signals report --json`). */
export interface SignalReport extends Omit<SignalAnalysis, 'candidatePatterns'> {
  candidatePatterns: SignalCandidatePattern[];
}

/** Options of {@link buildSignalReport}. */
export interface SignalReportOptions {
  /** End of the window. Default now. */
  now?: Date;
  settings?: Partial<AnalysisSettings>;
  /** The pattern library (deprecation candidates, extension drafts). */
  patterns?: readonly Pattern[];
  /** Section names of the active artifact (deprecation candidates). */
  knownSections?: readonly string[];
  /** Roles of known entity names, for drafts. */
  roleIndex?: RoleIndex;
}

/** Section names of an artifact: playbook sections, else markdown `##` headings, else none. */
export function artifactSectionNames(text: string): string[] {
  const playbook = playbookSections(text);
  if (playbook !== null) return Object.keys(playbook);
  return [...text.matchAll(/^##[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)].map((match) => match[1]!.trim());
}

/** Drafts the candidate pattern of one sketch (see the module comment). */
export function draftClusterPattern(
  sketch: CandidatePatternSketch,
  patterns: readonly Pattern[],
  roleIndex?: RoleIndex,
): { draft: PatternDraft | null; extends: string | null } {
  const behaviors = sketch.behaviors.map((entry) => entry.name);
  const commitments = sketch.hasCommitments ? 'with commitments' : 'without commitments';
  const description =
    `Drafted by Loop D (production feedback) for low-confidence assemblies of ${sketch.appClass} apps ${commitments}, ` +
    `${sketch.entityCountBucket} entities. Counts, shares and example goals are in the review item evidence.`;
  if (sketch.entities.length > 0) {
    const draft = draftPattern(
      {
        idWords: [sketch.appClass, ...sketch.entities.slice(0, 2).map((entry) => entry.name)],
        title: `${sketch.appClass}: ${sketch.entities
          .slice(0, 3)
          .map((entry) => entry.name)
          .join(', ')}`,
        description,
        appType: sketch.appClass,
        entities: sketch.entities.map((entry) => ({ name: entry.name })),
        behaviors,
      },
      roleIndex,
    );
    return { draft, extends: null };
  }
  const baseId = sketch.patternsUsed[0]?.name;
  const base = patterns.find((pattern) => pattern.id === baseId);
  if (base === undefined) return { draft: null, extends: null };
  const draft = draftPattern(
    {
      idWords: [base.id, 'with', ...behaviors],
      title: `${base.title} with ${behaviors.join(', ')}`,
      description,
      appType: sketch.appClass,
      entities: [],
      behaviors,
      base,
    },
    roleIndex,
  );
  return { draft, extends: base.id };
}

/** Builds the Loop D report of the study database (read-only). */
export async function buildSignalReport(db: StudyDatabase, options: SignalReportOptions = {}): Promise<SignalReport> {
  const now = options.now ?? new Date();
  const windowDays = options.settings?.windowDays ?? DEFAULT_SIGNALS_CONFIG.windowDays;
  const window = signalWindow(now, windowDays);
  const patterns = options.patterns ?? [];
  const analyzer = createSignalAnalyzer({
    now,
    ...(options.settings !== undefined ? { settings: options.settings } : {}),
    ...(options.patterns !== undefined ? { knownPatterns: patterns.map((pattern) => pattern.id) } : {}),
    ...(options.knownSections !== undefined ? { knownSections: options.knownSections } : {}),
  });
  await forEachSignalInRange(db, { from: new Date(window.from), to: new Date(window.to) }, (signal) =>
    analyzer.add(signal),
  );
  const analysis = analyzer.finish();
  return {
    ...analysis,
    candidatePatterns: analysis.candidatePatterns.map((sketch) => ({
      ...sketch,
      ...draftClusterPattern(sketch, patterns, options.roleIndex),
    })),
  };
}
