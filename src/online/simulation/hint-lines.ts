/**
 * The hint lines of the **simulated** cold-email audience: lines a
 * `sequence_strategy.md` variant may contain, each with a known, true effect
 * on the simulated recipients (nothing here describes real people). A
 * variant's effect is the product of the effects of the lines it contains.
 *
 * Kinds: `good` (a lasting relative reply lift of +10%, +20% or +30%),
 * `neutral` (no effect), `harmful` (a reply lift bought with many more
 * unsubscribes: it breaks the unsubscribe guardrail) and `novelty` (a reply
 * lift that is large when the variant is new and fades to zero within a
 * week of its first exposure).
 *
 * @module
 */

/** What a hint line does to the simulated audience. */
export type HintKind = 'good' | 'neutral' | 'harmful' | 'novelty';

/** A hint line and its true effect on the simulated audience. */
export interface HintLine {
  /** A stable name for tests and the bench. */
  readonly id: string;
  /** The line as it appears in the strategy text (matched as a whole line, case and surrounding space ignored). */
  readonly text: string;
  readonly kind: HintKind;
  /** Relative change of the reply probability (0.2 = +20%); for `novelty`, the change at first exposure. */
  readonly replyLift: number;
  /** Relative change of the unsubscribe probability (1 = twice as many). */
  readonly unsubscribeLift: number;
  /** `novelty` only: days after the variant's first exposure by which the lift has faded to zero (linearly). */
  readonly fadeDays?: number;
}

/** Every hint line of the simulated audience, with its true effect. */
export const HINT_LINES: readonly HintLine[] = Object.freeze([
  {
    id: 'good-10',
    text: 'Open with one specific observation about their company.',
    kind: 'good',
    replyLift: 0.1,
    unsubscribeLift: 0,
  },
  { id: 'good-20', text: 'Keep the first email under 80 words.', kind: 'good', replyLift: 0.2, unsubscribeLift: 0 },
  { id: 'good-30', text: 'End with a single yes-or-no question.', kind: 'good', replyLift: 0.3, unsubscribeLift: 0 },
  {
    id: 'neutral-signoff',
    text: 'Sign off with your first name only.',
    kind: 'neutral',
    replyLift: 0,
    unsubscribeLift: 0,
  },
  {
    id: 'neutral-case',
    text: 'Write the subject line in sentence case.',
    kind: 'neutral',
    replyLift: 0,
    unsubscribeLift: 0,
  },
  {
    id: 'harmful-daily',
    text: 'Send a follow-up every day until they reply.',
    kind: 'harmful',
    replyLift: 0.1,
    unsubscribeLift: 1.5,
  },
  { id: 'harmful-urgency', text: 'Say the offer expires today.', kind: 'harmful', replyLift: 0.15, unsubscribeLift: 1 },
  {
    id: 'novelty-news',
    text: 'Open with a joke about this week’s news.',
    kind: 'novelty',
    replyLift: 0.4,
    unsubscribeLift: 0,
    fadeDays: 7,
  },
] satisfies HintLine[]);

/** The hint lines and their true effects (for tests, the example and the bench). */
export function listHintLines(): readonly HintLine[] {
  return HINT_LINES;
}

const normalise = (line: string): string =>
  line
    .trim()
    .replace(/^[-*+]\s+/, '')
    .replace(/\s+/g, ' ')
    .toLowerCase();

/** The hint lines a variant's text contains (as whole lines; a list marker `- ` is ignored), in HINT_LINES order. */
export function hintLinesIn(variantText: string): HintLine[] {
  const lines = new Set(variantText.split(/\r?\n/).map(normalise));
  return HINT_LINES.filter((hint) => lines.has(normalise(hint.text)));
}

/**
 * The multipliers of the reply and unsubscribe probabilities for a variant
 * whose first exposure was `ageDays` days before this unit's exposure
 * (novelty lines fade with it): Π (1 + lift) over the lines present.
 */
export function effectMultipliers(hints: readonly HintLine[], ageDays: number): { reply: number; unsubscribe: number } {
  let reply = 1;
  let unsubscribe = 1;
  for (const hint of hints) {
    const fade = hint.fadeDays === undefined ? 1 : Math.max(0, 1 - Math.max(0, ageDays) / hint.fadeDays);
    reply *= 1 + hint.replyLift * fade;
    unsubscribe *= 1 + hint.unsubscribeLift * fade;
  }
  return { reply, unsubscribe };
}
