import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_EXIT_CODE } from '../../loop/stop-reasons.ts';
import { STUDY_BUSY_EXIT_CODE } from '../../storage/lease.ts';
import { LEASE_LOST_EXIT_CODE } from '../../storage/write-fence.ts';
import { EXIT, EXIT_CODES, EXIT_CODES_HELP } from './exit-codes.ts';

/** The codes of the table under "## Exit codes" in docs/reliability.md, in the order listed. */
function documentedCodes(): number[] {
  const text = readFileSync(path.resolve(import.meta.dirname, '../../../docs/reliability.md'), 'utf8');
  const section = text.slice(text.indexOf('## Exit codes'), text.indexOf('### The JSON error object'));
  return [...section.matchAll(/^\| (\d+)\s+\|/gm)].map((match) => Number(match[1]));
}

describe('the exit-code table', () => {
  it('docs/reliability.md lists exactly the codes of EXIT_CODES, in the same order', () => {
    expect(documentedCodes()).toEqual(Object.values(EXIT_CODES).map((entry) => entry.code));
  });

  it('agrees with the codes the errors and the stop reasons carry', () => {
    expect(EXIT.studyBusy).toBe(STUDY_BUSY_EXIT_CODE);
    expect(EXIT.leaseLost).toBe(LEASE_LOST_EXIT_CODE);
    expect(EXIT.interrupted).toBe(INTERRUPTED_EXIT_CODE);
    expect(EXIT).toMatchObject({ ok: 0, failed: 1, badInput: 2, studyBusy: 3, admissionRefused: 4, leaseLost: 5 });
  });

  it('kloop --help lists every code with its line', () => {
    const lines = EXIT_CODES_HELP.split('\n');
    expect(lines[0]).toBe('Exit codes:');
    expect(lines.slice(1, -1)).toEqual(
      Object.values(EXIT_CODES).map((entry) => `  ${String(entry.code).padEnd(5)}${entry.help}`),
    );
    expect(lines).toContain(
      '  130  interrupted (Ctrl-C, SIGTERM or a closed output pipe); the run is recorded as interrupted and the next run continues',
    );
  });
});
