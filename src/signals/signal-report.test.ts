import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBuiltInPatternLibrary } from '../assembly/pattern-library.ts';
import { loadStudyConfig } from '../config/config.ts';
import { artifactSectionNames, draftClusterPattern } from './signal-report.ts';
import { DEFAULT_SIGNALS_CONFIG } from '../config/signals-config.ts';

const library = loadBuiltInPatternLibrary();
const sketch = {
  clusterKey: 'helpdesk|no-commitments|1-3',
  appClass: 'helpdesk',
  hasCommitments: false,
  entityCountBucket: '1-3',
  size: 8,
  entities: [],
  behaviors: [{ name: 'rating', count: 8, share: 1 }],
  patternsUsed: [{ name: 'helpdesk', count: 8, share: 1 }],
  exampleGoals: [],
};

describe('Loop D pattern drafts', () => {
  it('a behaviour-only gap extends the pattern the cluster leaned on, under a new id', () => {
    const { draft, extends: base } = draftClusterPattern(sketch, library.patterns);
    expect(base).toBe('helpdesk');
    expect(draft?.id).toBe('candidate-helpdesk-with-rating');
    expect(draft?.valid).toBe(true);
    expect(draft?.yaml).toMatch(/behaviors:[\s\S]*- rating/);
  });

  it('typical uncovered entities make a new pattern; unknown roles are flagged', () => {
    const { draft, extends: base } = draftClusterPattern(
      { ...sketch, entities: [{ name: 'Warranty Claim', count: 8, share: 1 }] },
      library.patterns,
    );
    expect(base).toBeNull();
    expect(draft?.valid).toBe(true);
    expect(draft?.guessedRoles).toEqual(['Warranty Claim']);
    expect(draft?.yaml).toContain('# Roles guessed (check them): Warranty Claim');
  });

  it('nothing to draft without entities or a known pattern', () => {
    expect(draftClusterPattern({ ...sketch, patternsUsed: [] }, library.patterns).draft).toBeNull();
  });
});

describe('artifact sections', () => {
  it('playbook sections, else markdown headings', () => {
    const playbook = readFileSync(path.resolve(import.meta.dirname, '../../examples/intent/playbook.yaml'), 'utf8');
    expect(artifactSectionNames(playbook)).toContain('appTypeCues');
    expect(artifactSectionNames('# Prompt\n\n## Role\ntext\n## Output format ##\nmore\n')).toEqual([
      'Role',
      'Output format',
    ]);
  });
});

describe('the signals section of kloop.yaml', () => {
  function withSection(section: string): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'kloop-signals-config-'));
    cpSync(path.resolve(import.meta.dirname, '../../examples/intent'), dir, {
      recursive: true,
      filter: (source) => !source.includes('.kloop'),
    });
    const config = readFileSync(path.join(dir, 'kloop.yaml'), 'utf8');
    writeFileSync(path.join(dir, 'kloop.yaml'), `${config}\n${section}`);
    return dir;
  }

  it('has documented defaults', () => {
    expect(DEFAULT_SIGNALS_CONFIG).toMatchObject({
      storeGoals: true,
      windowDays: 7,
      confidenceThreshold: 0.7,
      lowConfidenceMethods: ['decomposed', 'partial'],
      minClusterSize: 5,
      entityCountBuckets: [3, 6, 10],
      mining: { minSupport: 5, thinCorpusBelow: 3 },
      endpoint: { maxBodyBytes: 1_048_576, ratePerSecond: 5, burst: 20 },
    });
  });

  it('reads settings, keeps a configured 0, and refuses unknown keys and decreasing buckets', () => {
    const good = withSection('signals:\n  storeGoals: false\n  confidenceThreshold: 0\n  windowDays: 14\n');
    const bad = withSection('signals:\n  windowDay: 7\n');
    const buckets = withSection('signals:\n  entityCountBuckets: [3, 3, 10]\n');
    try {
      const config = loadStudyConfig(good);
      expect(config.signals).toMatchObject({
        storeGoals: false,
        confidenceThreshold: 0,
        windowDays: 14,
        minClusterSize: 5,
      });
      expect(config.schedule).toMatchObject({ fast: '0 * * * *', slow: '0 3 * * 1' });
      expect(() => loadStudyConfig(bad)).toThrow(/signals\.windowDay/);
      expect(() => loadStudyConfig(buckets)).toThrow(/entityCountBuckets\[1\]: bucket bounds must increase strictly/);
    } finally {
      for (const dir of [good, bad, buckets]) rmSync(dir, { recursive: true, force: true });
    }
  });
});
