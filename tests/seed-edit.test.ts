/**
 * The artifact file seeds a new study only: once the notebook holds a seed,
 * `kloop run` continues from the active version. An edit of the file after
 * the first run used to be ignored without a word; the run now says so.
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kloop, makeSmallStudy } from './small-intent-study.ts';

const study = makeSmallStudy({
  optimization: 8,
  anchor: 2,
  shadow: 4,
  config: ['stopping: { maxExperiments: 1, plateauRounds: 1 }'],
});
afterAll(() => study.cleanup());

describe('an artifact file edited after the first run', () => {
  it('is named in a note, with the version the run continues from and how to start afresh', async () => {
    const first = await kloop('run', study.dir);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain('NOTE');
    appendFileSync(path.join(study.dir, 'playbook.yaml'), '# a hand edit\n');
    const second = await kloop('run', study.dir);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(
      /^kloop: NOTE: playbook\.yaml differs from the seed this study started from \(version 1\); the file seeds a new study only, and this run continues from the active version \d+\. To start afresh from the file: kloop reset /m,
    );
  }, 60_000);
});
