/**
 * The line-by-line state machine behind `parsePlantUml` (see `plantuml.ts`
 * for what it reads). One `PlantUmlReader` reads one diagram: `read()` each
 * comment-free, trimmed line, then `finish()` to close open blocks and
 * resolve the names links use (aliases, notes, implicit classes).
 */
import { parseHeader, unquote, type Header } from './plantuml-declaration.ts';
import { parseLink } from './plantuml-link.ts';
import {
  addEnumValues,
  addMember,
  CONTAINER,
  countOf,
  DECLARATION,
  type Frame,
  IGNORED,
  MEMBER_LINE,
  type Mode,
  parseNote,
  type Pending,
  UNSUPPORTED_DECLARATION,
} from './plantuml-lines.ts';
import type { PlantUmlClass, PlantUmlClassKeyword, PlantUmlDiagram, PlantUmlEnum, PlantUmlNote } from './plantuml.ts';

/** The reader's working state for one diagram (internal to `parsePlantUml`). */
export class PlantUmlReader {
  readonly diagram: PlantUmlDiagram = {
    classes: [],
    enums: [],
    relations: [],
    associationClasses: [],
    notes: [],
    packages: [],
    unread: [],
  };
  private readonly classes = new Map<string, PlantUmlClass>();
  private readonly enums = new Map<string, PlantUmlEnum>();
  private readonly aliases = new Map<string, string>();
  private readonly frames: Frame[] = [];
  private readonly pending: Pending[] = [];
  private mode: Mode = { type: 'diagram' };
  private lastElement: string | undefined;
  private lastLinkLine: number | undefined;
  private separator: string | undefined = '.';

  unread(line: number, text: string, reason: string): void {
    this.diagram.unread.push({ line, text, reason });
  }

  private packagePath(): string | undefined {
    const names = this.frames.flatMap((frame) => (frame.path === undefined ? [] : [frame.path]));
    return names.at(-1);
  }

  /** Splits `a.b.Name` into package `a.b` and name `Name` when `.` is the namespace separator. */
  private qualify(name: string): { name: string; package?: string } {
    const enclosing = this.packagePath();
    if (this.separator === undefined || !name.includes(this.separator)) {
      return enclosing === undefined ? { name } : { name, package: enclosing };
    }
    const parts = name.split(this.separator);
    const short = parts.pop() ?? name;
    const prefix = parts.join('.');
    return { name: short, package: enclosing === undefined ? prefix : `${enclosing}.${prefix}` };
  }

  private ensureClass(name: string, line: number, implicit: boolean): PlantUmlClass {
    const qualified = this.qualify(name);
    const existing = this.classes.get(qualified.name);
    if (existing !== undefined) {
      if (!implicit && existing.implicit) {
        existing.implicit = false;
        existing.line = line;
      }
      return existing;
    }
    const created: PlantUmlClass = {
      name: qualified.name,
      keyword: 'class',
      abstract: false,
      stereotypes: [],
      attributes: [],
      methods: [],
      ...(qualified.package === undefined ? {} : { package: qualified.package }),
      implicit,
      line,
    };
    this.classes.set(created.name, created);
    if (created.name !== name) this.aliases.set(name, created.name);
    this.diagram.classes.push(created);
    return created;
  }

  private declare(keyword: string, rest: string, line: number, text: string): void {
    const header = parseHeader(rest);
    if (header === undefined) {
      this.unread(line, text, `${keyword} declaration without a readable name`);
      return;
    }
    if (header.leftover !== undefined) {
      this.unread(line, text, `unexpected text after the declaration: ${header.leftover}`);
    }
    const qualified = this.qualify(header.name);
    if (keyword === 'enum') {
      if (this.classes.has(qualified.name)) {
        this.unread(line, text, `${qualified.name} is declared both as a class and as an enum`);
        return;
      }
      let target = this.enums.get(qualified.name);
      if (target === undefined) {
        target = {
          name: qualified.name,
          values: [],
          stereotypes: [],
          ...(qualified.package === undefined ? {} : { package: qualified.package }),
          line,
        };
        this.enums.set(target.name, target);
        this.diagram.enums.push(target);
      }
      target.stereotypes.push(...header.stereotypes);
      this.registerAlias(header, target.name);
      this.lastElement = target.name;
      if (header.body === 'inline' && header.inlineBody !== undefined) addEnumValues(target, header.inlineBody);
      if (header.body === 'open') {
        if (header.inlineBody !== undefined) addEnumValues(target, header.inlineBody);
        this.mode = { type: 'enum-body', target, line };
      }
      return;
    }
    if (this.enums.has(qualified.name)) {
      this.unread(line, text, `${qualified.name} is declared both as an enum and as a class`);
      return;
    }
    const target = this.ensureClass(header.name, line, false);
    const normalizedKeyword = keyword.replace(/\s+/g, ' ') as PlantUmlClassKeyword;
    target.keyword = normalizedKeyword;
    target.abstract = normalizedKeyword === 'abstract' || normalizedKeyword === 'abstract class';
    target.stereotypes.push(...header.stereotypes);
    this.registerAlias(header, target.name);
    this.lastElement = target.name;
    for (const parent of header.parents.extends) this.queueInheritance(target.name, parent, line, text);
    for (const parent of header.parents.implements) this.queueInheritance(target.name, parent, line, text);
    if (header.body === 'inline' && header.inlineBody !== undefined) addMember(target, header.inlineBody);
    if (header.body === 'open') {
      if (header.inlineBody !== undefined) addMember(target, header.inlineBody);
      this.mode = { type: 'class-body', target, line };
    }
  }

  private registerAlias(header: Header, name: string): void {
    if (header.alias !== undefined && header.alias !== name) {
      this.aliases.set(header.alias, name);
      const element = this.classes.get(name) ?? this.enums.get(name);
      if (element !== undefined) element.alias = header.alias;
    }
  }

  private queueInheritance(child: string, parent: string, line: number, text: string): void {
    this.pending.push({
      type: 'relation',
      relation: { from: child, to: parent, kind: 'inheritance', lineStyle: 'solid', hidden: false, line },
      text,
    });
  }

  private openContainer(keyword: string, rest: string, line: number, text: string): void {
    if (keyword === 'together') {
      this.frames.push({ kind: 'together', closer: '}', line });
      return;
    }
    const match = /^(?:"([^"]+)"|([^\s{<#"]+))(?:\s+as\s+(\S+))?\s*(?:<<[^>]*>>\s*)*(?:#\S+\s*)?(\{\s*\}|\{)?\s*$/.exec(
      rest.trim(),
    );
    if (match === null) {
      this.unread(line, text, `${keyword} declaration not read`);
      return;
    }
    const name = match[1] ?? match[2] ?? '';
    const parent = this.packagePath();
    const path = parent === undefined ? name : `${parent}.${name}`;
    this.diagram.packages.push({
      name,
      ...(match[3] === undefined ? {} : { alias: match[3] }),
      keyword,
      ...(parent === undefined ? {} : { parent }),
      line,
    });
    const brace = match[4]?.replace(/\s+/g, '');
    if (brace === '{}') return;
    this.frames.push({ kind: 'package', closer: brace === '{' ? '}' : 'end', path, line });
  }

  private closeContainer(closer: '}' | 'end', line: number, text: string): void {
    const frame = this.frames.at(-1);
    if (frame === undefined || frame.closer !== closer) {
      this.unread(line, text, frame === undefined ? 'closing a block that is not open' : 'mismatched block end');
      return;
    }
    this.frames.pop();
  }

  private note(rest: string, line: number, text: string): void {
    const parsed = parseNote(rest, line, this.lastLinkLine, this.lastElement);
    if ('reason' in parsed) {
      this.unread(line, text, parsed.reason);
      return;
    }
    this.diagram.notes.push(parsed.note);
    if (parsed.inline === undefined) this.mode = { type: 'note', note: parsed.note, lines: [] };
    else parsed.note.text = parsed.inline.trim();
  }

  /** Reads one line (comments already removed). */
  read(trimmed: string, line: number): void {
    const mode = this.mode;
    if (mode.type === 'class-body' || mode.type === 'enum-body') {
      const add = (member: string): void =>
        mode.type === 'class-body' ? addMember(mode.target, member) : addEnumValues(mode.target, member);
      if (trimmed === '}') this.mode = { type: 'diagram' };
      else if (trimmed.endsWith('}') && countOf(trimmed, '}') > countOf(trimmed, '{')) {
        add(trimmed.slice(0, trimmed.lastIndexOf('}')));
        this.mode = { type: 'diagram' };
      } else add(trimmed);
      return;
    }
    if (mode.type === 'note') {
      if (/^end\s*note$/i.test(trimmed)) {
        mode.note.text = mode.lines.join('\n').trim();
        this.mode = { type: 'diagram' };
      } else mode.lines.push(trimmed);
      return;
    }
    if (mode.type === 'skip') {
      if (mode.until.test(trimmed)) this.mode = { type: 'diagram' };
      return;
    }
    if (mode.type === 'skip-braces') {
      mode.depth += countOf(trimmed, '{') - countOf(trimmed, '}');
      if (mode.depth <= 0) this.mode = { type: 'diagram' };
      return;
    }
    this.statement(trimmed, line);
  }

  private statement(trimmed: string, line: number): void {
    let match: RegExpExecArray | null;
    if (trimmed === '}') return this.closeContainer('}', line, trimmed);
    if (/^end\s*(package|namespace|folder|frame|cloud|node|rectangle|database)$/i.test(trimmed)) {
      return this.closeContainer('end', line, trimmed);
    }
    const link = parseLink(trimmed);
    if (link !== undefined) {
      if (link.type === 'unreadable') return this.unread(line, trimmed, link.reason);
      this.lastLinkLine = line;
      if (link.type === 'association-class') {
        this.pending.push({
          type: 'association-class',
          value: { ends: [...link.ends], cls: link.cls, line },
          text: trimmed,
        });
        return;
      }
      const { type: _type, ...relation } = link;
      this.pending.push({ type: 'relation', relation: { ...relation, line }, text: trimmed });
      return;
    }
    if (/^skinparam\b.*\{\s*$/.test(trimmed)) {
      this.mode = { type: 'skip-braces', depth: 1, line, what: 'skinparam block' };
      return;
    }
    if (/^<style>/.test(trimmed)) {
      if (!/<\/style>/i.test(trimmed)) this.mode = { type: 'skip', until: /<\/style>/i, line, what: 'style block' };
      return;
    }
    if ((match = /^set\s+namespaceSeparator\s+(\S+)/.exec(trimmed)) !== null) {
      this.separator = match[1] === 'none' ? undefined : match[1];
      return;
    }
    if (IGNORED.test(trimmed)) return;
    if ((match = /^title(?:\s+(.*))?$/.exec(trimmed)) !== null) {
      if (match[1] === undefined) this.mode = { type: 'skip', until: /^end\s*title$/i, line, what: 'title block' };
      else this.diagram.title = match[1].trim();
      return;
    }
    if ((match = /^(?:(?:left|right|center)\s+)?(header|footer|legend)\b(.*)$/.exec(trimmed)) !== null) {
      const word = (match[1] ?? '').toLowerCase();
      const rest = (match[2] ?? '').trim();
      const blockStart = word === 'legend' ? /^(?:(?:top|bottom|left|right|center)\s*)*$/i.test(rest) : rest === '';
      if (blockStart)
        this.mode = { type: 'skip', until: new RegExp(`^end\\s*${word}$`, 'i'), line, what: `${word} block` };
      return;
    }
    if (trimmed.startsWith('!')) return this.unread(line, trimmed, 'preprocessor directive not evaluated');
    if ((match = CONTAINER.exec(trimmed)) !== null)
      return this.openContainer(match[1] ?? '', match[2] ?? '', line, trimmed);
    if (/^together\s*\{$/.test(trimmed)) return this.openContainer('together', '', line, trimmed);
    if ((match = /^note\s+(.*)$/.exec(trimmed)) !== null) return this.note(match[1] ?? '', line, trimmed);
    if ((match = DECLARATION.exec(trimmed)) !== null) {
      return this.declare((match[1] ?? '').replace(/\s+/g, ' '), match[2] ?? '', line, trimmed);
    }
    if ((match = UNSUPPORTED_DECLARATION.exec(trimmed)) !== null) {
      return this.unread(line, trimmed, `'${match[1]}' declarations are not read (not a class or enum)`);
    }
    if ((match = MEMBER_LINE.exec(trimmed)) !== null) {
      const name = unquote(match[1] ?? '');
      if (this.enums.has(this.aliases.get(name) ?? name)) {
        addEnumValues(this.enums.get(this.aliases.get(name) ?? name)!, match[2] ?? '');
      } else addMember(this.ensureClass(this.aliases.get(name) ?? name, line, true), match[2] ?? '');
      return;
    }
    this.unread(line, trimmed, /--|\.\.|\s[-.]\S*\s/.test(trimmed) ? 'link not read' : 'statement not recognised');
  }

  /** Resolves a name used in a link to a declared element. */
  private resolve(name: string): { kind: 'class' | 'enum' | 'note'; name: string } | undefined {
    const direct = this.aliases.get(name) ?? name;
    if (this.classes.has(direct)) return { kind: 'class', name: direct };
    if (this.enums.has(direct)) return { kind: 'enum', name: direct };
    if (this.diagram.notes.some((note) => note.alias === name)) return { kind: 'note', name };
    if (this.separator !== undefined && name.includes(this.separator)) {
      const short = name.split(this.separator).at(-1) ?? name;
      if (short !== name) return this.resolve(short);
    }
    return undefined;
  }

  private canonical(name: string, line: number): string {
    return this.resolve(name)?.name ?? this.ensureClass(name, line, true).name;
  }

  private noteByAlias(alias: string): PlantUmlNote | undefined {
    return this.diagram.notes.find((note) => note.alias === alias);
  }

  /** Closes open blocks and resolves the names used by links. */
  finish(lastLine: number): PlantUmlDiagram {
    const mode = this.mode;
    if (mode.type === 'class-body' || mode.type === 'enum-body') {
      this.unread(mode.line, mode.target.name, 'body not closed before the end of the diagram');
    } else if (mode.type === 'note') {
      mode.note.text = mode.lines.join('\n').trim();
      this.unread(mode.note.line, mode.note.text, 'note block not closed with end note');
    } else if (mode.type === 'skip' || mode.type === 'skip-braces') {
      this.unread(mode.line, mode.what, `${mode.what} not closed`);
    }
    this.mode = { type: 'diagram' };
    for (const frame of this.frames.splice(0)) {
      this.unread(frame.line, frame.path ?? frame.kind, `block opened here is not closed by line ${lastLine}`);
    }
    for (const item of this.pending.splice(0)) {
      if (item.type === 'association-class') {
        const { value } = item;
        const note = this.resolve(value.cls)?.kind === 'note' ? this.noteByAlias(value.cls) : undefined;
        const ends: [string, string] = [
          this.canonical(value.ends[0], value.line),
          this.canonical(value.ends[1], value.line),
        ];
        if (note !== undefined) note.attachedTo.push({ kind: 'association', ends });
        else
          this.diagram.associationClasses.push({ ends, cls: this.canonical(value.cls, value.line), line: value.line });
        continue;
      }
      const { relation } = item;
      const fromNote = this.resolve(relation.from)?.kind === 'note' ? this.noteByAlias(relation.from) : undefined;
      const toNote = this.resolve(relation.to)?.kind === 'note' ? this.noteByAlias(relation.to) : undefined;
      if (fromNote !== undefined && toNote !== undefined) {
        this.unread(relation.line, item.text, 'link between two notes');
      } else if (fromNote !== undefined || toNote !== undefined) {
        const other = fromNote === undefined ? relation.from : relation.to;
        (fromNote ?? toNote)!.attachedTo.push({ kind: 'element', name: this.canonical(other, relation.line) });
      } else {
        this.diagram.relations.push({
          ...relation,
          from: this.canonical(relation.from, relation.line),
          to: this.canonical(relation.to, relation.line),
        });
      }
    }
    return this.diagram;
  }
}
