/**
 * A tolerant reader for PlantUML class diagrams, written for externally
 * authored corpora (exam and textbook cases) that strict parsers reject.
 *
 * It reads: `class`, `abstract class`, `abstract`, `interface`, `entity`,
 * `enum` (with value lists), class bodies (attributes and methods, multi-line
 * `{ ... }`), stereotypes `<<...>>`, quoted names and aliases
 * (`class "Long Name" as LN`, `class LN as "Long Name"`), `extends` /
 * `implements` in declarations, members added with `Name : member`,
 * packages and namespaces (nested braces or `end package`), notes (single
 * line and `note ... end note` blocks, floating notes with an alias and their
 * links), association classes `(A, B) .. C` / `C .. (A, B)`, links with any
 * arrow shape (see `plantuml-link.ts`), skinparams, `hide`/`show`, `title`,
 * comments (`'` and `/' ... '/`) and `@startuml`/`@enduml`.
 *
 * Names a link uses but nothing declares become classes with
 * `implicit: true`, as PlantUML itself draws them. Everything it cannot read
 * is listed in `unread` with its line number and a reason; nothing is guessed
 * silently. Line numbers are 1-based. Not read (listed in `unread`):
 * `object`, `usecase`, `annotation` and other non-class declarations,
 * preprocessor directives (`!include`, `!define`, ...), arrow heads `#`, `+`,
 * `{`, `}`, conflicting heads, links carrying a stereotype, and
 * association-class links with an arrow head. Layout statements (skinparam,
 * hide/show, directions, scale, style, legend, header, footer, caption) are
 * read and ignored.
 *
 * ```ts
 * const diagram = parsePlantUml('@startuml\nclass Order\nOrder "1" *-- "*" OrderLine\n@enduml');
 * diagram.relations[0]; // { from: 'Order', to: 'OrderLine', kind: 'composition', fromMultiplicity: '1', toMultiplicity: '*', ... }
 * ```
 *
 * Source: the PlantUML class-diagram language reference, plantuml.com/class-diagram.
 */
import type { PlantUmlRelationKind } from './plantuml-link.ts';
import { PlantUmlReader } from './plantuml-reader.ts';

export type { PlantUmlRelationKind } from './plantuml-link.ts';

/** The keyword a class was declared with (`class` also for implicit classes). */
export type PlantUmlClassKeyword = 'class' | 'abstract class' | 'abstract' | 'interface' | 'entity';

/** A class, abstract class, interface or entity. */
export interface PlantUmlClass {
  /** Display name: the quoted name when one is given, else the identifier. */
  name: string;
  /** The other name links may use (`class "Long Name" as LN` → alias `LN`). */
  alias?: string;
  keyword: PlantUmlClassKeyword;
  abstract: boolean;
  /** Stereotype texts without the `<<` `>>` brackets. */
  stereotypes: string[];
  attributes: string[];
  methods: string[];
  /** Enclosing package path, outermost first, joined with `.`. */
  package?: string;
  /** True when no declaration names it: a link or a `Name : member` line created it. */
  implicit: boolean;
  /** Line of the declaration (or first use, when implicit). */
  line: number;
}

/** An enumeration: a value set, not a record. */
export interface PlantUmlEnum {
  name: string;
  alias?: string;
  values: string[];
  stereotypes: string[];
  package?: string;
  line: number;
}

/** A link between two classifiers, direction normalised (see `plantuml-link.ts`). */
export interface PlantUmlRelation {
  from: string;
  to: string;
  kind: PlantUmlRelationKind;
  lineStyle: 'solid' | 'dashed';
  /** Multiplicity text written at the `from` end, e.g. `1`, `0..*`. */
  fromMultiplicity?: string;
  /** Multiplicity text written at the `to` end. */
  toMultiplicity?: string;
  label?: string;
  /** Layout-only link (`-[hidden]-`). */
  hidden: boolean;
  line: number;
}

/** `cls` is the association class of the association between `ends`. */
export interface PlantUmlAssociationClass {
  ends: [string, string];
  cls: string;
  line: number;
}

/** What a note is attached to. */
export type PlantUmlNoteTarget =
  | { kind: 'element'; name: string }
  | { kind: 'association'; ends: [string, string] }
  | { kind: 'link'; line: number };

export interface PlantUmlNote {
  text: string;
  alias?: string;
  attachedTo: PlantUmlNoteTarget[];
  line: number;
}

export interface PlantUmlPackage {
  name: string;
  alias?: string;
  keyword: string;
  /** Path of the enclosing package, if any. */
  parent?: string;
  line: number;
}

/** A line the reader could not interpret. */
export interface PlantUmlUnread {
  line: number;
  text: string;
  reason: string;
}

/** Everything read from one PlantUML class diagram. */
export interface PlantUmlDiagram {
  title?: string;
  classes: PlantUmlClass[];
  enums: PlantUmlEnum[];
  relations: PlantUmlRelation[];
  associationClasses: PlantUmlAssociationClass[];
  notes: PlantUmlNote[];
  packages: PlantUmlPackage[];
  unread: PlantUmlUnread[];
}

/**
 * Parses the text of a PlantUML class diagram. Never throws: what it cannot
 * read is listed in `unread`. Text outside `@startuml` … `@enduml` is listed
 * there too (when the text has an `@startuml` at all).
 */
export function parsePlantUml(text: string): PlantUmlDiagram {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  const hasStart = lines.some((line) => /^\s*@startuml\b/i.test(line));
  const reader = new PlantUmlReader();
  let inDiagram = !hasStart;
  let inBlockComment = false;
  let blockCommentLine = 0;
  lines.forEach((raw, index) => {
    const line = index + 1;
    let content = raw;
    if (inBlockComment) {
      const end = content.indexOf("'/");
      if (end < 0) return;
      content = content.slice(end + 2);
      inBlockComment = false;
    }
    for (let start = content.indexOf("/'"); start >= 0; start = content.indexOf("/'")) {
      const end = content.indexOf("'/", start + 2);
      if (end < 0) {
        content = content.slice(0, start);
        inBlockComment = true;
        blockCommentLine = line;
        break;
      }
      content = content.slice(0, start) + content.slice(end + 2);
    }
    const trimmed = content.trim();
    if (trimmed === '' || trimmed.startsWith("'")) return;
    if (/^@startuml\b/i.test(trimmed)) {
      inDiagram = true;
      return;
    }
    if (/^@enduml\b/i.test(trimmed)) {
      inDiagram = false;
      return;
    }
    if (!inDiagram) return reader.unread(line, trimmed, 'outside @startuml … @enduml');
    reader.read(trimmed, line);
  });
  if (inBlockComment) reader.unread(blockCommentLine, "/'", "block comment not closed with '/");
  return reader.finish(lines.length);
}
