/**
 * A small copy of examples/intent in a temporary folder, for the corpus
 * lifecycle tests: the same playbook and program, a slice of each partition
 * of the reference corpus in one JSONL file, and a small corpusPolicy.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { IntentExampleRecord } from '../src/corpus/intent-example.ts';
import { asIntentExamples, intentRecord } from '../src/corpus/intent-example.ts';
import { loadStudy } from '../src/study/load-study.ts';

export const EXAMPLE_STUDY = path.resolve(import.meta.dirname, '../examples/intent');

/** The reference corpus, by partition as its files have it: intent records (`{ id, goal, expected, tags, partition }`). */
export function referenceCorpus(): Record<'optimization' | 'anchor' | 'shadow', readonly IntentExampleRecord[]> {
  const study = loadStudy(EXAMPLE_STUDY);
  // The examples' own .kloop state may have moved partitions: take the files' partitions.
  const files = asIntentExamples(study.fileCorpus!.map((entry) => entry.example)).map(intentRecord);
  return {
    optimization: files.filter((example) => example.partition === 'optimization'),
    anchor: files.filter((example) => example.partition === 'anchor'),
    shadow: files.filter((example) => example.partition === 'shadow'),
  };
}

export interface SmallStudyOptions {
  optimization: number;
  anchor: number;
  shadow: number;
  /** Rewrites each example before it is written (e.g. plants a marker in shadow goals). */
  transform?: (example: IntentExampleRecord) => IntentExampleRecord;
  /** Extra kloop.yaml lines (gate, stopping, corpusPolicy). */
  config: string[];
}

/** Creates the study folder; returns it and a cleanup. */
export function makeSmallStudy(options: SmallStudyOptions): {
  dir: string;
  cleanup: () => void;
  examples: IntentExampleRecord[];
} {
  const reference = referenceCorpus();
  const examples = [
    ...reference.optimization.slice(0, options.optimization),
    ...reference.anchor.slice(0, options.anchor),
    ...reference.shadow.slice(0, options.shadow),
  ].map((example) => options.transform?.(example) ?? example);
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-small-study-'));
  mkdirSync(path.join(dir, 'corpus'));
  copyFileSync(path.join(EXAMPLE_STUDY, 'playbook.yaml'), path.join(dir, 'playbook.yaml'));
  copyFileSync(path.join(EXAMPLE_STUDY, 'program.md'), path.join(dir, 'program.md'));
  writeFileSync(
    path.join(dir, 'corpus', 'small.jsonl'),
    `${examples.map((example) => JSON.stringify(example)).join('\n')}\n`,
  );
  writeFileSync(
    path.join(dir, 'kloop.yaml'),
    ['artifact: playbook.yaml', 'corpus: corpus/small.jsonl', 'seed: 7', ...options.config].join('\n'),
  );
  return { dir, examples, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export { kloop } from './cli-in-process.ts';
