/**
 * The study the peer-fault scenarios start from, as a user makes it:
 * `kloop init <dir> --task custom --executor command` (in-process), then the
 * files the scenario changes (score.ts, run.mjs, the corpus) written over
 * the sample's. Each scenario runs the CLI on it in-process
 * (tests/cli-in-process.ts); the command executor still starts `node run.mjs`
 * once per example.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { kloop } from '../cli-in-process.ts';

/** One ticket of the corpus: its text, queue, priority and partition. */
export interface Ticket {
  id: string;
  text: string;
  label: 'billing' | 'technical' | 'account' | 'shipping';
  priority: 'low' | 'normal' | 'high';
  partition: 'optimization' | 'anchor' | 'shadow';
}

/**
 * Twelve tickets on which the sample rules route `subscription` and `card`
 * tickets wrong (no rule names them), so the keyword-rules proposer has
 * edits to offer: 6 optimization, 3 anchor, 3 shadow.
 */
export const TICKETS: readonly Ticket[] = [
  {
    id: 't01',
    text: 'Please cancel my subscription renewal for next year.',
    label: 'billing',
    priority: 'normal',
    partition: 'optimization',
  },
  {
    id: 't02',
    text: 'My subscription was renewed without asking me.',
    label: 'billing',
    priority: 'normal',
    partition: 'optimization',
  },
  {
    id: 't03',
    text: 'The card on file expired, how do I update the card?',
    label: 'billing',
    priority: 'low',
    partition: 'optimization',
  },
  {
    id: 't04',
    text: 'The tracking number does not work for my parcel.',
    label: 'shipping',
    priority: 'normal',
    partition: 'optimization',
  },
  {
    id: 't05',
    text: 'I forgot my password and the reset mail never came.',
    label: 'account',
    priority: 'normal',
    partition: 'optimization',
  },
  {
    id: 't06',
    text: 'Your subscription page shows the wrong plan for my team.',
    label: 'billing',
    priority: 'normal',
    partition: 'optimization',
  },
  {
    id: 't07',
    text: 'The invoice for May lists a wrong address.',
    label: 'billing',
    priority: 'normal',
    partition: 'anchor',
  },
  {
    id: 't08',
    text: 'The app shows an error when I upload a photo.',
    label: 'technical',
    priority: 'normal',
    partition: 'anchor',
  },
  {
    id: 't09',
    text: 'I cannot change my username in the profile.',
    label: 'account',
    priority: 'high',
    partition: 'anchor',
  },
  {
    id: 't10',
    text: 'Stop the subscription, I moved to another provider.',
    label: 'billing',
    priority: 'normal',
    partition: 'shadow',
  },
  {
    id: 't11',
    text: 'The delivery came to the neighbour instead of me.',
    label: 'shipping',
    priority: 'normal',
    partition: 'shadow',
  },
  {
    id: 't12',
    text: 'A crash happens on startup since the update.',
    label: 'technical',
    priority: 'normal',
    partition: 'shadow',
  },
];

/** The corpus file of `tickets`, in the format of corpus/examples.yaml. */
export function corpusYaml(tickets: readonly Ticket[]): string {
  return tickets
    .map(
      (ticket) =>
        `- id: ${ticket.id}\n  input: ${JSON.stringify(ticket.text)}\n  expected: { label: ${ticket.label}, priority: ${ticket.priority} }\n  partition: ${ticket.partition}\n`,
    )
    .join('\n');
}

/** A custom study made by `kloop init … --task custom --executor command`, in a temporary folder removed by `cleanups`. */
export interface CustomStudy {
  dir: string;
  /** Writes a file of the study (relative to its folder). */
  write(file: string, text: string): void;
  read(file: string): string;
}

export async function makeCustomStudy(
  cleanups: Array<() => void>,
  options: { tickets?: readonly Ticket[] } = {},
): Promise<CustomStudy> {
  const parent = mkdtempSync(path.join(tmpdir(), 'kloop-peer-fault-'));
  cleanups.push(() => rmSync(parent, { recursive: true, force: true }));
  const dir = path.join(parent, 'tickets');
  const init = await kloop('init', dir, '--task', 'custom', '--executor', 'command');
  expect(init.code, init.stderr).toBe(0);
  const study: CustomStudy = {
    dir,
    write: (file, text) => writeFileSync(path.join(dir, file), text),
    read: (file) => readFileSync(path.join(dir, file), 'utf8'),
  };
  study.write('corpus/examples.yaml', corpusYaml(options.tickets ?? TICKETS));
  // A small screening budget keeps each scenario fast (every edit scored runs the program once per example);
  // the scenarios are about faults, not about what the default budget finds.
  const config = study.read('kloop.yaml');
  expect(config).toContain('  candidatesPerRound: 6\n');
  study.write(
    'kloop.yaml',
    config.replace('  candidatesPerRound: 6\n', '  candidatesPerRound: 6\n  maxEvaluations: 10 # screening budget\n'),
  );
  return study;
}
