import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandNameOf, createProgram, jsonErrorOf, wantsJson } from './main.ts';
import { InputError } from '../errors.ts';

/** `<study> [action]`, as commander prints a command's arguments. */
function argumentsOf(command: Command): string {
  return command.registeredArguments
    .map((argument) => (argument.required ? `<${argument.name()}>` : `[${argument.name()}]`))
    .join(' ');
}

/** The leaf commands under `command` (itself when it has no subcommands). */
function leaves(command: Command): Command[] {
  return command.commands.length === 0 ? [command] : command.commands.flatMap(leaves);
}

describe('the command catalogue', () => {
  it('lists every command the modules register, with the arguments and the start of the description they declare', async () => {
    const program = await createProgram();
    expect(program.commands.map((command) => command.name())).toEqual(COMMANDS.map((entry) => entry.name));
    for (const entry of COMMANDS) {
      const command = program.commands.find((candidate) => candidate.name() === entry.name)!;
      expect(argumentsOf(command), entry.name).toBe(entry.arguments);
      expect(
        command.description().startsWith(entry.summary),
        `${entry.name}: "${command.description()}" starts with "${entry.summary}"`,
      ).toBe(true);
      // A summary is a whole phrase, not a description cut at its first colon ("Check a study: the database").
      expect(entry.summary, entry.name).not.toMatch(/[:,;]$/);
      expect(entry.summary.split(' ').length, entry.name).toBeGreaterThan(5);
    }
  });

  it('every command takes --json', async () => {
    const program = await createProgram();
    const withoutJson = leaves(program)
      .filter((command) => !command.options.some((option) => option.long === '--json'))
      .map((command) => `${command.parent?.name()} ${command.name()}`);
    expect(withoutJson).toEqual([]);
  });

  it('loads only the module of the command being run; the others are stand-ins listed by --help', async () => {
    const program = await createProgram(['history']);
    const history = program.commands.find((command) => command.name() === 'history')!;
    const run = program.commands.find((command) => command.name() === 'run')!;
    expect(history.options.map((option) => option.long)).toEqual(['--json']);
    expect(run.options.map((option) => option.long)).toEqual(['--json']); // the stand-in
    expect(
      (await createProgram(['run'])).commands.find((command) => command.name() === 'run')!.options.length,
    ).toBeGreaterThan(5);
  });
});

describe('command-line reading', () => {
  it('finds the command name, also after `help`', () => {
    expect(commandNameOf(['status', 'examples/intent'])).toBe('status');
    expect(commandNameOf(['help', 'run'])).toBe('run');
    expect(commandNameOf(['--help'])).toBeUndefined();
    expect(commandNameOf([])).toBeUndefined();
  });

  it('sees --json before a `--` only', () => {
    expect(wantsJson(['history', 'x', '--json'])).toBe(true);
    expect(wantsJson(['history', 'x', '--', '--json'])).toBe(false);
    expect(wantsJson(['history', 'x'])).toBe(false);
  });

  it('the JSON error object carries the code, the message without its location, and the location fields', () => {
    const error = new InputError('unknown key "alpah"', { file: 'kloop.yaml', line: 12, field: 'gate.alpah' });
    expect(jsonErrorOf(error)).toEqual({
      error: { code: 'input', message: 'unknown key "alpah"', file: 'kloop.yaml', line: 12, field: 'gate.alpah' },
    });
    expect(jsonErrorOf(new Error('boom'))).toEqual({ error: { code: 'internal', message: 'boom' } });
  });
});
