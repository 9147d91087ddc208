/**
 * Removes exercise instructions from a modelling-case description, so that
 * what remains describes the system only (what a user of kloop would write).
 *
 * Case descriptions from courses and exams mix the system description with
 * instructions to a student ("Create a class diagram ...", "Use at least one
 * role name", "STEP 1"). These rules strip, and report:
 *
 * - **headings**: exercise headings (`Task`, `Exercise 2`, `STEP 1`, `Part A`,
 *   `Question 3:`), and short label lines ending in `:` (at most four words,
 *   e.g. `Project description:`). Other markdown headings keep their text.
 * - **modelling vocabulary**: a sentence that speaks about the modelling
 *   exercise rather than the system: class/UML/ER diagrams, use cases, this
 *   exercise/exam/assignment, your task/model/solution, setters and getters,
 *   role and association names, "described below/above", the textual syntax.
 * - **imperatives to the student**: a sentence or bullet that starts with an
 *   instruction verb (create, draw, model, formalise, identify, use, add,
 *   ignore, ...) and names an unambiguous modelling element (diagram,
 *   generalisation, inheritance, multiplicity, visibility, "classes and
 *   attributes"), and `Model the following ...`, `Read the case ...`. Words that are also
 *   business words (class, role, method, association) do not count alone.
 * - **framing**: a sentence ending in `:` that introduces "the following
 *   specification/description/information/...".
 *
 * Sentences are split at `.`, `!` or `?` followed by a capital, a digit or an
 * opening quote, not after common abbreviations (e.g., i.e., etc.).
 *
 * ```ts
 * stripExerciseInstructions('A shop sells bikes. Create a class diagram for it.').text; // 'A shop sells bikes.'
 * ```
 */

/** One piece of text that was removed, with the rule that removed it. */
export interface StrippedText {
  /** 1-based line of the description. */
  line: number;
  text: string;
  reason: string;
}

export interface InstructionStripping {
  /** The description without the instructions; paragraphs kept, blank runs collapsed. */
  text: string;
  stripped: StrippedText[];
}

const EXERCISE_HEADING =
  /^(?:task|tasks|exercise|exercises|assignment|question|questions|instructions?|step|part|deliverables?|hints?|subtask)(?:\s+(?:\d+|[a-z]|[ivx]+))?[\s.:)\-–]*$/i;

const MODELLING_VOCABULARY: readonly [RegExp, string][] = [
  [
    /\b(?:class|uml|er|entity[- ]relationship|object|domain[- ]model|sequence|state|activity)\s+diagrams?\b/i,
    'mentions the diagram to produce',
  ],
  [/\buml\b/i, 'mentions UML'],
  [/\buse[- ]cases?\b/i, 'mentions use cases'],
  [/\bthis\s+(?:exercise|exam|assignment)\b/i, 'refers to the exercise'],
  [/\byour\s+(?:task|job|assignment|model|diagram|solution|answer)\b/i, 'addresses the student'],
  [/\byou\s+are\s+(?:asked|required|expected)\s+to\b/i, 'addresses the student'],
  [/\b(?:setters?|getters?)\b/i, 'mentions code-level modelling details'],
  [/\b(?:role|association)\s+names?\b/i, 'mentions modelling notation'],
  [/\btextual\s+syntax\b/i, 'mentions modelling notation'],
  [/\bdescribed\s+(?:below|above)\b/i, 'framing sentence'],
  [/\bthe\s+evaluation\s+of\b/i, 'refers to grading'],
];

const INSTRUCTION_VERB =
  /^(?:please\s+)?(?:first|then|next|finally|now|also)?[,\s]*(?:create|draw|design|model|formali[sz]e|write(?:\s+down)?|construct|build|develop|produce|complete|extend|revise|identify|assign|use|ignore|add|include|make\s+sure|list|specify|define|give|show|indicate|derive|translate|convert|sketch|annotate|label|refine)\b/i;
const MODELLING_OBJECT =
  /\b(?:diagrams?|generali[sz]ations?|speciali[sz]ations?|inheritance|multiplicit(?:y|ies)|cardinalit(?:y|ies)|visibilit(?:y|ies)|solution|fsms?|(?:classes|attributes|associations|operations)\s+and\s+(?:their\s+)?(?:attributes|associations|relationships|operations|multiplicities))\b/i;
const FRAMING =
  /\bthe\s+following\s+(?:specification|description|information|text|case|situation|requirements|scenario|story)\b.*:\s*$/i;

const ABBREVIATIONS = /\b(?:e\.g|i\.e|etc|vs|mr|mrs|ms|dr|no|nr|approx|cf|incl|resp|st)\.$/i;

/** Splits one line into sentences, each keeping its trailing whitespace. */
export function splitSentences(line: string): string[] {
  const sentences: string[] = [];
  let start = 0;
  const boundary = /[.!?]+["”’')\]]*(\s+)(?=["“‘'(]?[\p{Lu}\p{N}])/gu;
  for (let match = boundary.exec(line); match !== null; match = boundary.exec(line)) {
    const end = match.index + match[0].length;
    const candidate = line.slice(start, match.index + match[0].length - (match[1]?.length ?? 0));
    if (ABBREVIATIONS.test(candidate)) continue;
    sentences.push(line.slice(start, end));
    start = end;
  }
  if (start < line.length) sentences.push(line.slice(start));
  return sentences;
}

/** Why a sentence is an instruction to a student, or undefined when it describes the system. */
export function instructionReason(sentence: string): string | undefined {
  const text = sentence.trim().replace(/^\(+|\)+$/g, '');
  if (text === '') return undefined;
  for (const [pattern, reason] of MODELLING_VOCABULARY) if (pattern.test(text)) return reason;
  if (/^model\s+(?:the|this)\s+following\b/i.test(text)) return 'instruction to the student';
  if (/^read\s+(?:the|this)\b.*\b(?:case|text|description|carefully)\b/i.test(text))
    return 'instruction to the student';
  if (INSTRUCTION_VERB.test(text) && MODELLING_OBJECT.test(text)) return 'instruction to the student';
  if (FRAMING.test(text)) return 'framing sentence introducing the description';
  return undefined;
}

function headingReason(line: string): string | undefined {
  const trimmed = line.trim();
  const heading = /^#{1,6}\s+(.*)$/.exec(trimmed)?.[1] ?? trimmed;
  if (EXERCISE_HEADING.test(heading.replace(/[*_]/g, '').trim())) return 'exercise heading';
  if (/:$/.test(heading) && heading.split(/\s+/).length <= 4 && !/[.!?]/.test(heading)) return 'label heading';
  return undefined;
}

/** Strips exercise instructions from a case description (rules in the module comment). */
export function stripExerciseInstructions(description: string): InstructionStripping {
  const stripped: StrippedText[] = [];
  const kept: string[] = [];
  description.split(/\r\n|\r|\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') {
      kept.push('');
      return;
    }
    const heading = headingReason(raw);
    if (heading !== undefined) {
      stripped.push({ line, text: raw.trim(), reason: heading });
      return;
    }
    const bullet = /^(\s*(?:[-*•+]|\d+[.)]|[a-z][.)]|\([a-z0-9]+\))\s+)(.*)$/i.exec(raw);
    const body = (bullet?.[2] ?? raw).replace(/^#{1,6}\s+/, '');
    const keptSentences: string[] = [];
    for (const sentence of splitSentences(body)) {
      const reason = instructionReason(sentence);
      if (reason === undefined) keptSentences.push(sentence);
      else stripped.push({ line, text: sentence.trim(), reason });
    }
    const rest = keptSentences.join('').trim();
    if (rest === '') return;
    kept.push(bullet === null ? rest : `${bullet[1] ?? ''}${rest}`);
  });
  const text = kept
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { text, stripped };
}
