/**
 * Can the configured proposer read the study's artifact? Checked once, by
 * parsing the artifact as that proposer will, before anything is paid for:
 * by `kloop doctor` (finding `setup.proposer`) and at the start of
 * `kloop run` (an InputError, exit 2, before the lease, the baseline or a
 * model call). A proposer that cannot read its incumbent fails the same way
 * on every attempt (`INVALID_INCUMBENT`, src/proposers/proposer.ts), so the
 * loop would only spend rounds finding out.
 *
 * | proposer | reads the artifact as |
 * |---|---|
 * | `error-driven` on a `routing-rules` or `command` executor | a routing-rules file (src/executors/routing-rules/routing-rules.ts) |
 * | `search` | a YAML or JSON file holding every `proposer.space` path with a scalar value |
 * | `reflective` on a program's `.json`, `.yaml`, `.yml` artifact | a JSON or YAML object (its top-level keys are edited) |
 * | `reflective` otherwise, `error-driven` on the intent playbook | text / the playbook the offline executor itself parses: nothing to check here |
 *
 * Every message names the artifact's actual file, and the fix names the
 * proposer that fits it instead.
 */
import path from 'node:path';
import { InputError } from '../errors.ts';
import { safeParseRoutingRules } from '../executors/routing-rules/routing-rules.ts';
import { artifactFormatOf, readDataObject } from '../proposers/data-edits.ts';
import { ParamsFileError, formatOf, readParams } from '../proposers/search/params-file.ts';
import type { StudyConfig } from '../config/config.ts';

/** The failure code of a proposer that cannot read the incumbent (src/proposers/proposer.ts), for the CLI's reports. */
export { INVALID_INCUMBENT } from '../proposers/proposer.ts';

/** What keeps the proposer from reading the artifact, and what to do. */
export interface ProposerFitProblem {
  /** One sentence naming the proposer, the artifact's file and the parser's message. */
  message: string;
  /** The proposer that fits instead, or how to make the artifact readable. */
  fix: string;
}

type FitConfig = Pick<StudyConfig, 'executor' | 'proposer'> & { artifact: string };

/** The proposers that read a file of this name, in words (the fix of a proposer that does not). */
function fittingProposers(file: string): string {
  const reflective = `proposer.kind: reflective — an LLM that edits ${file}${artifactFormatOf(file) === 'markdown' ? '' : ' by its top-level keys'} (proposer.model; proposer.baseURL or --base-url for a local OpenAI-compatible server, no key: docs/llm.md)`;
  if (artifactFormatOf(file) === 'markdown') return `use ${reflective}`;
  return `use ${reflective}; or, when ${file} holds numeric or categorical parameters, proposer.kind: search with a proposer.space (docs/search.md)`;
}

/**
 * The problem, or null when the configured proposer reads `artifactText`
 * (the study's artifact, or its active version).
 *
 * @example
 * ```ts
 * proposerFitProblem({ executor: { kind: 'command' }, proposer: { kind: 'error-driven' }, artifact: '/s/rules.json' }, '{"fields": {}}');
 * // { message: 'the error-driven proposer edits routing-rules files (default, rules of any/all/none terms) and cannot read rules.json: rules.json:1: …', fix: 'use proposer.kind: reflective — …' }
 * ```
 */
export function proposerFitProblem(config: FitConfig, artifactText: string): ProposerFitProblem | null {
  const file = path.basename(config.artifact);
  const { kind } = config.proposer;
  const executor = config.executor.kind;
  if (kind === 'error-driven' && (executor === 'routing-rules' || executor === 'command')) {
    const parsed = safeParseRoutingRules(artifactText, file);
    if (parsed.ok) return null;
    return {
      message: `the error-driven proposer edits routing-rules files (default, rules of any/all/none terms) and cannot read ${file}: ${parsed.error.message}`,
      fix: fittingProposers(file),
    };
  }
  if (kind === 'search') {
    try {
      readParams(artifactText, config.proposer.space ?? {}, file, formatOf(file));
      return null;
    } catch (error) {
      if (!(error instanceof ParamsFileError)) throw error;
      return {
        message: `the search proposer cannot read its parameters in ${file}: ${error.message}`,
        fix: `name in proposer.space only paths that ${file} holds with a number, string or boolean (docs/search.md); or ${fittingProposers(file)}`,
      };
    }
  }
  if (kind === 'reflective' && executor !== 'llm' && executor !== 'offline') {
    const format = artifactFormatOf(file);
    if (format === 'markdown') return null;
    const read = readDataObject(artifactText, format, file);
    if (read.ok) return null;
    return {
      message: `the reflective proposer edits ${file} by its top-level keys and cannot read it: ${read.message}`,
      fix: `make ${file} a ${format === 'json' ? 'JSON' : 'YAML'} object of named keys, or give the artifact another extension (.md, .txt) to have it edited as text`,
    };
  }
  return null;
}

/**
 * {@link proposerFitProblem} as the refusal of `kloop run`.
 *
 * @throws InputError (code `input.proposer`, field `proposer.kind`, the artifact's file) naming the fix
 */
export function assertProposerFits(config: FitConfig, artifactText: string): void {
  const problem = proposerFitProblem(config, artifactText);
  if (problem === null) return;
  throw new InputError(`${problem.message}; nothing was run. Fix: ${problem.fix}`, {
    code: 'input.proposer',
    field: 'proposer.kind',
    file: config.artifact,
  });
}
