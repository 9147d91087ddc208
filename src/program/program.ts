/**
 * The program (`program.md`): the seed's three registers, read from markdown
 * headings.
 *
 * - **Instructions**: what to try.
 * - **Constraints**: what must not change. Prose, plus one optional fenced
 *   ```` ```yaml ```` block of mechanical constraints that code checks
 *   (see `constraints.ts`).
 * - **Stopping criteria**: when to stop and report (prose; the numbers the
 *   loop obeys live in `kloop.yaml` under `stopping`).
 *
 * Headings may be of any level (`#` to `######`, or setext underlines), in
 * any case, numbered (`## 2. Constraints`) and followed by a colon or an
 * explanation after a dash or in parentheses (`## Constraints — invariants`).
 * Accepted names: "Instructions"; "Constraints" or "Invariants"; "Stopping
 * criteria", "Stop criteria", "Stopping criterion", "Stopping conditions" or
 * "When to stop". A register runs until the next register heading or the
 * next heading of the same or a higher level; deeper headings stay inside it.
 * Headings inside fenced code blocks are not headings.
 *
 * Source: the "3-register program" of the karpathy-loop seed (seeds/002).
 */
import { readFileSync } from 'node:fs';
import { InputError } from '../errors.ts';
import {
  checkConstraints,
  defaultMechanicalConstraints,
  mechanicalConstraintsSchema,
  type MechanicalConstraints,
} from './constraints.ts';
import { parseLocatedYaml, parseWithSchema } from './yaml-locations.ts';

export { checkConstraints, mechanicalConstraintsSchema };
export type {
  ConstraintCheck,
  ConstraintCheckInput,
  ConstraintViolation,
  MechanicalConstraints,
} from './constraints.ts';

/** The three registers, in their canonical order. */
export const REGISTERS = ['instructions', 'constraints', 'stopping'] as const;
export type RegisterName = (typeof REGISTERS)[number];

/** How each register is named in messages. */
export const REGISTER_TITLES: Readonly<Record<RegisterName, string>> = {
  instructions: 'Instructions',
  constraints: 'Constraints',
  stopping: 'Stopping criteria',
};

const REGISTER_ALIASES: Readonly<Record<string, RegisterName>> = {
  instructions: 'instructions',
  instruction: 'instructions',
  constraints: 'constraints',
  constraint: 'constraints',
  invariants: 'constraints',
  'stopping criteria': 'stopping',
  'stopping criterion': 'stopping',
  'stop criteria': 'stopping',
  'stop criterion': 'stopping',
  'stopping conditions': 'stopping',
  'stop conditions': 'stopping',
  'when to stop': 'stopping',
};

/** A parsed program. Register texts are trimmed markdown, headings excluded. */
export interface Program {
  /** What to try next (prose for the proposer). */
  instructions: string;
  /** What must not change, as written (prose and the YAML block). */
  constraints: string;
  /** When to stop and report (prose). */
  stopping: string;
  /** The constraints code checks; defaults when the register has no YAML block. */
  mechanical: MechanicalConstraints;
  /** 1-based line of each register's heading. */
  lines: Readonly<Record<RegisterName, number>>;
}

interface Heading {
  level: number;
  text: string;
  /** 0-based index of the heading's text line. */
  index: number;
  /** 0-based index of the first line after the heading (after a setext underline). */
  bodyStart: number;
}

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^`]*)$/;
const BLOCK_START = /^ {0,3}([-*+>]|\d+[.)]|#|\||<)/;

/** A fenced code block: its lines are `start` (the fence) to `end` (the closing fence), 0-based. */
interface Fence {
  start: number;
  end: number;
  info: string;
}

/** Finds fenced code blocks; throws on one that is never closed. */
function findFences(lines: readonly string[], fileName: string): Fence[] {
  const fences: Fence[] = [];
  let open: { start: number; marker: string; info: string } | undefined;
  lines.forEach((line, index) => {
    const match = FENCE.exec(line);
    if (open === undefined) {
      if (match !== null && !(match[1]!.startsWith('`') && (match[2] ?? '').includes('`'))) {
        open = { start: index, marker: match[1]!, info: (match[2] ?? '').trim() };
      }
    } else if (
      match !== null &&
      match[1]![0] === open.marker[0] &&
      match[1]!.length >= open.marker.length &&
      (match[2] ?? '').trim() === ''
    ) {
      fences.push({ start: open.start, end: index, info: open.info });
      open = undefined;
    }
  });
  if (open !== undefined) {
    throw new InputError(`a fenced code block opened here is never closed (add a closing ${open.marker})`, {
      file: fileName,
      line: open.start + 1,
      code: 'input.program',
    });
  }
  return fences;
}

function findHeadings(lines: readonly string[], fences: readonly Fence[]): Heading[] {
  const inFence = new Array<boolean>(lines.length).fill(false);
  for (const fence of fences) for (let index = fence.start; index <= fence.end; index += 1) inFence[index] = true;
  const headings: Heading[] = [];
  lines.forEach((line, index) => {
    if (inFence[index]) return;
    const atx = ATX_HEADING.exec(line);
    if (atx !== null) {
      headings.push({ level: atx[1]!.length, text: (atx[2] ?? '').trim(), index, bodyStart: index + 1 });
      return;
    }
    const underline = SETEXT_UNDERLINE.exec(line);
    const previous = lines[index - 1];
    const beforePrevious = lines[index - 2];
    if (
      underline !== null &&
      previous !== undefined &&
      previous.trim() !== '' &&
      !inFence[index - 1] &&
      !BLOCK_START.test(previous) &&
      (beforePrevious === undefined || beforePrevious.trim() === '')
    ) {
      headings.push({
        level: underline[1]!.startsWith('=') ? 1 : 2,
        text: previous.trim(),
        index: index - 1,
        bodyStart: index + 1,
      });
    }
  });
  return headings;
}

/** Maps a heading's text to a register, or undefined when it names none. */
export function registerOfHeading(text: string): RegisterName | undefined {
  let name = text
    .replace(/[*_`]/g, '')
    .trim()
    .toLowerCase()
    .replace(/^\d+[.)]?\s+/, '')
    .replace(/\s*\(.*\)\s*$/, '');
  name = name.split(/\s+[—–-]\s+|:/)[0] ?? '';
  name = name.replace(/\s+/g, ' ').trim();
  return REGISTER_ALIASES[name];
}

/**
 * Parses `program.md`.
 *
 * @param text the file's content (UTF-8 text)
 * @param fileName used in error messages
 * @returns the three registers and the mechanical constraints (defaults when
 *   the Constraints register has no YAML block)
 * @throws InputError (`file:line: register: message`) when a register is
 *   missing, duplicated or empty, when a code block is never closed, when the
 *   Constraints register has more than one YAML block, or when that block is
 *   malformed or has an unknown key or a wrong value
 * @example
 * ```ts
 * const program = parseProgram('# Instructions\nTry cues.\n# Constraints\nKeep ids.\n# Stopping criteria\nAfter 50.', 'program.md');
 * program.mechanical.maxArtifactCharacters; // 50000
 * ```
 */
export function parseProgram(text: string, fileName: string): Program {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  const fences = findFences(lines, fileName);
  const headings = findHeadings(lines, fences);
  const found = findRegisters(headings, fileName);
  requireRegisters(found, headings, fileName);
  const bodies = registerBodies(lines, headings, found, fileName);
  const constraints = bodies.constraints;
  const mechanical = mechanicalConstraintsOf(lines, fences, constraints, fileName);
  return {
    instructions: bodies.instructions.text,
    constraints: constraints.text,
    stopping: bodies.stopping.text,
    mechanical,
    lines: {
      instructions: found.get('instructions')!.index + 1,
      constraints: found.get('constraints')!.index + 1,
      stopping: found.get('stopping')!.index + 1,
    },
  };
}

/** The heading of each register, by name. @throws InputError when a register heading appears twice */
function findRegisters(headings: readonly Heading[], fileName: string): Map<RegisterName, Heading> {
  const found = new Map<RegisterName, Heading>();
  for (const heading of headings) {
    const register = registerOfHeading(heading.text);
    if (register === undefined) continue;
    const first = found.get(register);
    if (first !== undefined) {
      throw new InputError(
        `duplicate register "${REGISTER_TITLES[register]}" (first at line ${first.index + 1}); merge them into one`,
        {
          file: fileName,
          line: heading.index + 1,
          field: REGISTER_TITLES[register],
          code: 'input.program',
        },
      );
    }
    found.set(register, heading);
  }
  return found;
}

/** Checks that the three registers are all present. @throws InputError naming the first missing register and the line of the nearest register before it */
function requireRegisters(
  found: ReadonlyMap<RegisterName, Heading>,
  headings: readonly Heading[],
  fileName: string,
): void {
  for (const [position, register] of REGISTERS.entries()) {
    if (found.has(register)) continue;
    const earlier = REGISTERS.slice(0, position)
      .map((name) => found.get(name))
      .filter((heading): heading is Heading => heading !== undefined)
      .at(-1);
    const nearest = earlier ?? [...found.values()].sort((left, right) => left.index - right.index)[0] ?? headings[0];
    const present = REGISTERS.filter((name) => found.has(name)).map((name) => REGISTER_TITLES[name]);
    throw new InputError(
      `missing register "${REGISTER_TITLES[register]}": a program needs three headings, Instructions, Constraints and Stopping criteria (found: ${present.length > 0 ? present.join(', ') : 'none'})`,
      {
        file: fileName,
        line: nearest === undefined ? 1 : nearest.index + 1,
        field: REGISTER_TITLES[register],
        code: 'input.program',
      },
    );
  }
}

/** The text of each register and its line span (up to the next heading of its level or the next register). @throws InputError when a register is empty */
function registerBodies(
  lines: readonly string[],
  headings: readonly Heading[],
  found: ReadonlyMap<RegisterName, Heading>,
  fileName: string,
): Record<RegisterName, { text: string; start: number; end: number }> {
  const bodies = {} as Record<RegisterName, { text: string; start: number; end: number }>;
  for (const register of REGISTERS) {
    const heading = found.get(register)!;
    const next = headings.find(
      (other) =>
        other.index > heading.index && (other.level <= heading.level || registerOfHeading(other.text) !== undefined),
    );
    const end = next === undefined ? lines.length : next.index;
    const body = lines.slice(heading.bodyStart, end).join('\n').trim();
    if (body === '') {
      throw new InputError(`register "${REGISTER_TITLES[register]}" is empty`, {
        file: fileName,
        line: heading.index + 1,
        field: REGISTER_TITLES[register],
        code: 'input.program',
      });
    }
    bodies[register] = { text: body, start: heading.bodyStart, end };
  }
  return bodies;
}

/** The Constraints register's one ```yaml block, parsed (defaults without one). @throws InputError for a second block or a malformed one */
function mechanicalConstraintsOf(
  lines: readonly string[],
  fences: readonly Fence[],
  constraints: { start: number; end: number },
  fileName: string,
): MechanicalConstraints {
  const yamlBlocks = fences.filter(
    (fence) => fence.start >= constraints.start && fence.end < constraints.end && /^(yaml|yml)\b/i.test(fence.info),
  );
  let mechanical = defaultMechanicalConstraints();
  const [block, extra] = yamlBlocks;
  if (extra !== undefined) {
    throw new InputError('more than one ```yaml block; put every mechanical constraint in one block', {
      file: fileName,
      line: extra.start + 1,
      field: REGISTER_TITLES.constraints,
      code: 'input.program',
    });
  }
  if (block !== undefined) {
    const source = { file: fileName, lineOffset: block.start + 1 };
    const located = parseLocatedYaml(lines.slice(block.start + 1, block.end).join('\n'), source);
    const value = located.value ?? {};
    mechanical = parseWithSchema(mechanicalConstraintsSchema, { ...located, value }, source, 'constraints');
  }
  return mechanical;
}

/**
 * Reads and parses a `program.md` file (UTF-8).
 *
 * @throws InputError when the file is missing or unreadable, or as {@link parseProgram}
 */
export function loadProgram(filePath: string): Program {
  let text: string;
  try {
    text = readFileSync(filePath, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message;
    throw new InputError(`cannot read the program: ${reason}`, { file: filePath, code: 'input.program', cause: error });
  }
  return parseProgram(text, filePath);
}
