/**
 * A study whose every round proposes two different candidates with the same
 * delta text (issue 36, fault 10): the reflective proposer, answered by a
 * scripted OpenAI-compatible server on 127.0.0.1, adds one new line to the
 * Roles section of the prompt, once at its end and once at its start. Both
 * candidates describe their change as `## Roles\n+ <line>`; their texts differ.
 *
 * The executor's answers (the gold intent of each goal) lose their entities
 * unless the prompt holds {@link GOOD_LINE}, the line of round 1: round 1's
 * first candidate is accepted, its twin is rebased onto it (the line twice)
 * and refused; later rounds add lines that change nothing and are refused,
 * until the plateau stops the study. With `gate.minDeltaDistance: 0` the
 * twins are both evaluated (at the default, the second is skipped as a
 * near-duplicate: also a decision a resumed round must find by identity).
 *
 * The line of a round is numbered by how often the marker already occurs in
 * the proposer's prompt (incumbent and history), which depends only on the
 * rounds before: a resumed round gets the answer the original got.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ChatRequest, FakeResponse, FakeServer } from '../llm-fake-openai-server.ts';
import type { LlmStopStudy } from '../llm-stop-study.ts';
import { incumbentOf, makeLlmStopStudy, sectionOf, serveStudy } from '../llm-stop-study.ts';

/** Every proposed line carries it. */
export const MARKER = 'Decide each role from what the record does (note';
/** Round 1's line: the one that helps. */
export const GOOD_LINE = `${MARKER} 0).`;

/** The kloop.yaml blocks of the study. */
export const IDENTICAL_DELTAS_CONFIG = {
  proposer: 'proposer: { kind: reflective, candidatesPerRound: 2, concurrency: 2 }',
  gate: 'gate: { repeats: 1, requireCalibration: false, minDeltaDistance: 0, shadowAlpha: 0.5 }',
  stopping: 'stopping: { maxExperiments: 12, plateauRounds: 2, maxRounds: 5, maxConsecutiveFailures: 3 }',
};

/** Writes the study (6 optimization, 2 anchor, 6 shadow examples). */
export function makeIdenticalDeltasStudy(): LlmStopStudy {
  return makeLlmStopStudy({ optimization: 6, anchor: 2, shadow: 6, ...IDENTICAL_DELTAS_CONFIG });
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

/** The proposer's answer: the round's line at the end of Roles and at its start. */
export function twinCandidates(chat: ChatRequest): FakeResponse {
  const roles = sectionOf(incumbentOf(chat), 'Roles');
  const line = `${MARKER} ${occurrences(chat.user, MARKER)}).`;
  return {
    content: JSON.stringify({
      candidates: [
        { rationale: 'state the rule after the list', edits: [{ section: 'Roles', text: `${roles}\n\n${line}` }] },
        { rationale: 'state the rule before the list', edits: [{ section: 'Roles', text: `${line}\n\n${roles}` }] },
      ],
    }),
  };
}

/** Options of {@link serveIdenticalDeltas}. */
export interface ServeOptions {
  /** Called for an executor request instead of answering it when it returns a promise (the request is held until it resolves). */
  hold?: (chat: ChatRequest) => Promise<void> | undefined;
}

/** Starts the scripted server of the study. */
export function serveIdenticalDeltas(study: LlmStopStudy, options: ServeOptions = {}): Promise<FakeServer> {
  return serveStudy(study, {
    proposer: twinCandidates,
    executor: (chat, gold) => {
      if (gold === undefined) return undefined;
      const answer: FakeResponse = {
        content: JSON.stringify(chat.system.includes(GOOD_LINE) ? gold : { ...gold, entities: [] }),
      };
      const held = options.hold?.(chat);
      return held === undefined ? answer : held.then(() => answer);
    },
  });
}

/** The prompt file of a study folder (to check the scenario's premise). */
export function promptOf(study: LlmStopStudy): string {
  return readFileSync(path.join(study.dir, 'prompt.md'), 'utf8');
}
