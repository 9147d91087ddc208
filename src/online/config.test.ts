import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadStudyConfig } from '../config/config.ts';
import { loadOnlineConfig, studyModeOf } from './config.ts';
import { parseDurationMs } from './duration.ts';

const folders: string[] = [];
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

function study(yaml: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'kloop-online-config-'));
  folders.push(folder);
  writeFileSync(path.join(folder, 'kloop.yaml'), yaml);
  writeFileSync(path.join(folder, 'strategy.md'), 'Write short emails.\n');
  writeFileSync(
    path.join(folder, 'program.md'),
    '# Instructions\n- a\n# Constraints\nnone\n# Stopping criteria\nnever\n',
  );
  return folder;
}

const MINIMAL = 'mode: online\nartifact: strategy.md\nmetrics:\n  primary: reply_rate\n';

describe('online study configuration', () => {
  it('fills every default and turns durations into milliseconds', () => {
    const config = loadOnlineConfig(study(MINIMAL));
    expect(config.metrics).toEqual({
      primary: { name: 'reply_rate', kind: 'binary', direction: 'increase' },
      guardrails: [],
      split: 0.5,
      ramp: [0.5],
      attributionWindowMs: 72 * 3_600_000,
      rampEveryMs: 86_400_000,
      windows: { minUnitsPerArm: 1000, confirmationUnits: 8000 },
    });
    expect(config.proposer).toEqual({ kind: 'ideas' });
    expect(config.gate).toEqual({ alpha: 0.05, shadowAlpha: 0.05, srmAlpha: 0.001 });
  });

  it('reads guardrails, a ramp and the windows', () => {
    const config = loadOnlineConfig(
      study(
        `${MINIMAL}  guardrails:\n    - { name: unsubscribe_rate, direction: decrease, margin: 0.004 }\n  attributionWindow: 3d\n  ramp: [0.05, 0.2, 0.5]\n  windows: { minUnitsPerArm: 200, confirmationUnits: 300 }\n`,
      ),
    );
    expect(config.metrics.guardrails).toEqual([
      { name: 'unsubscribe_rate', kind: 'binary', direction: 'decrease', margin: 0.004 },
    ]);
    expect(config.metrics.ramp).toEqual([0.05, 0.2, 0.5]);
    expect(config.metrics.attributionWindowMs).toBe(3 * 86_400_000);
    expect(config.metrics.windows).toEqual({ minUnitsPerArm: 200, confirmationUnits: 300 });
  });

  it.each([
    [`${MINIMAL}  attributionWindow: 72\n`, 'kloop.yaml:5', 'metrics.attributionWindow'],
    [`${MINIMAL}  ramp: [0.2, 0.05, 0.5]\n`, 'kloop.yaml:5', 'metrics.ramp[1]'],
    [`${MINIMAL}  ramp: [0.05, 0.2]\n`, 'kloop.yaml:5', 'metrics.ramp[1]'],
    [`${MINIMAL}  guardrails:\n    - { name: unsub }\n`, 'kloop.yaml:6', 'metrics.guardrails[0].margin'],
    [`${MINIMAL}corpus: [a.yaml]\n`, 'kloop.yaml:5', 'corpus'],
    [`${MINIMAL}  windows: { minUnits: 3 }\n`, 'kloop.yaml:5', 'metrics.windows.minUnits'],
    ['mode: online\nartifact: strategy.md\n', 'kloop.yaml:1', 'metrics'],
  ])('refuses bad input with file, line and field (%#)', (yaml, location, field) => {
    const folder = study(yaml);
    let error: unknown;
    try {
      loadOnlineConfig(folder);
    } catch (caught) {
      error = caught;
    }
    expect(String(error)).toContain(location);
    expect((error as { field?: string }).field).toBe(field);
  });

  it('dispatches on mode: offline is the default, online is refused by the offline reader', () => {
    expect(studyModeOf(study(MINIMAL))).toBe('online');
    expect(studyModeOf(study('artifact: strategy.md\n'))).toBe('offline');
    expect(() => loadStudyConfig(study(MINIMAL))).toThrow(/kloop\.yaml:1: mode: this is an online study/);
    expect(() => studyModeOf(study('mode: hybrid\n'))).toThrow(/mode must be offline or online/);
  });

  it('parses durations', () => {
    expect([parseDurationMs('90m'), parseDurationMs('1.5h'), parseDurationMs('0h'), parseDurationMs('72')]).toEqual([
      5_400_000,
      5_400_000,
      undefined,
      undefined,
    ]);
  });
});
