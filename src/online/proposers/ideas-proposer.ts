/**
 * The offline stand-in proposer of online studies (`proposer.kind: ideas`,
 * the default): it calls no model. It reads the ideas listed in program.md's
 * Instructions register (one list item each: `- idea`, `* idea`, `1. idea`)
 * and proposes, one experiment at a time, the incumbent with the first idea
 * not tried yet appended as a line `- <idea>`. An idea is tried once: a
 * variant whose text (by content hash) or idea was proposed before is
 * skipped, whatever its outcome. When every idea is tried it proposes
 * nothing (the study stops as `no_new_proposals`).
 *
 * It learns nothing from the outcomes: what it reads of the decided
 * experiments is which ideas they tried (never a confirmation window).
 * A model that writes variants from the decided experiments' outcomes is
 * the reflective proposer (src/online/proposers/reflective-online-proposer.ts).
 */
import { contentHash } from '../../artifact/content-hash.ts';
import type { Program } from '../../program/program.ts';

/** A decided experiment as a proposer may read it: its variant and its decision-window result only. */
export interface DecidedExperimentSummary {
  readonly id: number;
  /** The idea or rationale the variant was proposed with. */
  readonly rationale: string;
  /** Content hash of the variant's text. */
  readonly candidateHash: string;
  /** `accepted` or `refused` (or `invalid`). */
  readonly status: string;
  readonly reason: string | null;
  /** The decision window's primary means per arm and units (never the confirmation window's). */
  readonly decisionWindow: {
    readonly incumbentMean: number;
    readonly candidateMean: number;
    readonly units: number;
  } | null;
  /** The variant's text. */
  readonly candidateText?: string;
  /** The primary check's anytime-valid interval for Δ on the decision window (ends null when unbounded), null when it never ran. */
  readonly interval?: { readonly lower: number | null; readonly upper: number | null; readonly level: number } | null;
}

/** What an online proposer is told. */
export interface OnlineProposalContext {
  readonly incumbentText: string;
  readonly program: Program;
  readonly decided: readonly DecidedExperimentSummary[];
}

/** A proposed variant. */
export interface OnlineCandidate {
  readonly text: string;
  readonly rationale: string;
}

/** An online proposer: the next variant, or undefined when it has nothing new. */
export interface OnlineProposer {
  readonly name: string;
  propose(context: OnlineProposalContext): Promise<OnlineCandidate | undefined>;
}

/** The ideas of an Instructions register: its list items, in order, each once. */
export function ideasOf(instructions: string): string[] {
  const ideas: string[] = [];
  for (const line of instructions.split(/\r?\n/)) {
    const match = /^\s*(?:[-*+]|\d+[.)])\s+(.+?)\s*$/.exec(line);
    if (match !== null && !ideas.includes(match[1]!)) ideas.push(match[1]!);
  }
  return ideas;
}

/** The ideas proposer (see the module's description). */
export function createIdeasProposer(): OnlineProposer {
  return {
    name: 'ideas',
    async propose({ incumbentText, program, decided }) {
      const triedHashes = new Set(decided.map((experiment) => experiment.candidateHash));
      const triedIdeas = new Set(decided.map((experiment) => experiment.rationale));
      for (const idea of ideasOf(program.instructions)) {
        if (triedIdeas.has(idea)) continue;
        const text = `${incumbentText.replace(/\s*$/, '')}\n- ${idea}\n`;
        if (triedHashes.has(contentHash(text))) continue;
        return { text, rationale: idea };
      }
      return undefined;
    },
  };
}
