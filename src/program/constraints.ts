/**
 * Mechanical constraints: the part of a program's Constraints register that
 * code checks, so that no invariant depends on a model reading prose.
 *
 * They are written as one fenced YAML block inside the Constraints register
 * of `program.md`:
 *
 * ```yaml
 * editableSections: [appTypeCues, entityAliases]   # optional; absent = every section may change
 * maxArtifactCharacters: 20000                      # ceiling on the candidate's length (default 50000)
 * forbiddenText: ["TODO", "ignore previous"]        # case-insensitive substrings a candidate must not contain
 * requiredText: ["version: 1"]                      # exact (case-sensitive) substrings a candidate must keep
 * ```
 *
 * Unknown keys are errors. {@link checkConstraints} applies them to a
 * candidate; the gate calls it first (DESIGN §3, check 1).
 */
import { z } from 'zod';
import { characterCount } from '../text/characters.ts';

/** Default ceiling on an artifact's length, in characters (Unicode code points). */
export const DEFAULT_MAX_ARTIFACT_CHARACTERS = 50_000;

/** The schema of the mechanical constraints block (a strict object: unknown keys are errors). */
export const mechanicalConstraintsSchema = z.strictObject({
  /**
   * Sections of the artifact a candidate may change. Absent = every section.
   * An empty list is refused (it would forbid every change; omit the key instead).
   */
  editableSections: z
    .array(z.string().trim().min(1, 'a section name cannot be empty'))
    .min(1, 'list at least one section, or omit editableSections to allow every section')
    .optional(),
  /** Largest allowed artifact length in characters (code points), at least 1. Default 50 000. */
  maxArtifactCharacters: z
    .int()
    .min(1, 'the ceiling must be at least 1 character')
    .default(DEFAULT_MAX_ARTIFACT_CHARACTERS),
  /** Substrings a candidate must not contain, compared case-insensitively. Default none. */
  forbiddenText: z.array(z.string().min(1, 'forbidden text cannot be empty')).default([]),
  /** Substrings a candidate must keep, compared exactly (case-sensitive). Default none. */
  requiredText: z.array(z.string().min(1, 'required text cannot be empty')).default([]),
});

/** Parsed mechanical constraints, defaults applied. */
export type MechanicalConstraints = z.output<typeof mechanicalConstraintsSchema>;

/** The mechanical constraints of a program without a YAML block: no section limit, the default ceiling. */
export function defaultMechanicalConstraints(): MechanicalConstraints {
  return mechanicalConstraintsSchema.parse({});
}

/** Which constraint a violation broke; `format` = the candidate could not be read as sections. */
export type ConstraintName = keyof MechanicalConstraints | 'format';

export interface ConstraintViolation {
  constraint: ConstraintName;
  message: string;
}

/** The outcome of {@link checkConstraints}: evidence, not a bare boolean. */
export interface ConstraintCheck {
  passed: boolean;
  violations: ConstraintViolation[];
}

export interface ConstraintCheckInput {
  /** Full text of the incumbent artifact. */
  incumbentText: string;
  /** Full text of the candidate artifact. */
  candidateText: string;
  /**
   * Splits an artifact into named sections (name → section text). Called on
   * both texts; when it throws on the candidate, that is a `format` violation.
   */
  sectionsOf: (text: string) => Record<string, string>;
}

/** Length of a text in Unicode code points (what "characters" means in a ceiling): src/text/characters.ts. */
export { characterCount };

/**
 * Checks a candidate against the mechanical constraints.
 *
 * - `editableSections`: every section outside the list has the same text in
 *   incumbent and candidate; a section added or removed counts as a change.
 * - `maxArtifactCharacters`: the candidate has at most this many characters.
 * - `forbiddenText`: the candidate contains none of these (case-insensitive).
 * - `requiredText`: the candidate contains each of these (exact match).
 *
 * Never throws for a bad candidate: every problem is a violation.
 *
 * @throws Error only when `sectionsOf` fails on the incumbent (a broken study, not a bad candidate)
 * @example
 * ```ts
 * const check = checkConstraints(
 *   { editableSections: ['cues'], maxArtifactCharacters: 100, forbiddenText: ['TODO'], requiredText: [] },
 *   { incumbentText: 'a', candidateText: 'b', sectionsOf: (text) => ({ cues: text }) },
 * );
 * check.passed; // true
 * ```
 */
export function checkConstraints(mechanical: MechanicalConstraints, input: ConstraintCheckInput): ConstraintCheck {
  const violations: ConstraintViolation[] = [];
  const { candidateText } = input;

  if (mechanical.editableSections !== undefined) {
    const incumbentSections = input.sectionsOf(input.incumbentText);
    let candidateSections: Record<string, string> | undefined;
    try {
      candidateSections = input.sectionsOf(candidateText);
    } catch (error) {
      violations.push({
        constraint: 'format',
        message: `the candidate cannot be read as sections: ${(error as Error).message}`,
      });
    }
    if (candidateSections !== undefined) {
      const editable = new Set(mechanical.editableSections);
      const names = new Set([...Object.keys(incumbentSections), ...Object.keys(candidateSections)]);
      for (const name of [...names].sort()) {
        if (editable.has(name)) continue;
        const before = Object.hasOwn(incumbentSections, name) ? incumbentSections[name] : undefined;
        const after = Object.hasOwn(candidateSections, name) ? candidateSections[name] : undefined;
        if (before === after) continue;
        const change = before === undefined ? 'added' : after === undefined ? 'removed' : 'changed';
        violations.push({
          constraint: 'editableSections',
          message: `section "${name}" is not editable but was ${change} (editable: ${mechanical.editableSections.join(', ')})`,
        });
      }
    }
  }

  const length = characterCount(candidateText);
  if (length > mechanical.maxArtifactCharacters) {
    violations.push({
      constraint: 'maxArtifactCharacters',
      message: `the candidate has ${length} characters, over the ceiling of ${mechanical.maxArtifactCharacters}`,
    });
  }

  const lowered = candidateText.toLowerCase();
  for (const text of mechanical.forbiddenText) {
    if (lowered.includes(text.toLowerCase())) {
      violations.push({ constraint: 'forbiddenText', message: `the candidate contains forbidden text "${text}"` });
    }
  }

  for (const text of mechanical.requiredText) {
    if (!candidateText.includes(text)) {
      violations.push({ constraint: 'requiredText', message: `the candidate lost required text "${text}"` });
    }
  }

  return { passed: violations.length === 0, violations };
}
