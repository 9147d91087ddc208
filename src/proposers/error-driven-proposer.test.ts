import { describe, expect, it } from 'vitest';
import { contentHash } from '../artifact/content-hash.ts';
import type { Example } from '../corpus/example.ts';
import type { IntentExample } from '../corpus/intent-example.ts';
import type { ExpectedIntent } from '../tasks/intent/intent.ts';
import type { ExampleScoreRecord, PartitionScore } from '../evaluator/partition-score.ts';
import { createOfflineExecutor } from '../tasks/intent/offline/offline-executor.ts';
import { parsePlaybook } from '../tasks/intent/offline/playbook.ts';
import { applyPlaybookEdit } from '../tasks/intent/offline/playbook-edit.ts';
import { scoreExample } from '../tasks/intent/scorer.ts';
import type { ProposalContext } from './proposer.ts';
import { ERROR_DRIVEN_PROPOSER_ID, createErrorDrivenProposer } from './error-driven-proposer.ts';

// The planted error: the playbook knows "book" but not "appointment" as a booking cue.
const PLAYBOOK = `# Fixture playbook
appTypeCues:
  booking: [book]
  helpdesk: [ticket]
defaultAppType: other
entityTerms:
  patient: party
stopList: [app]
unknownNounPolicy: {include: true, role: resource, actorRole: party}
behaviorCues:
  notification: [remind]
defaultProjections: [list]
`;

function example(
  id: string,
  goal: string,
  expected: ExpectedIntent,
  partition: Example['partition'] = 'optimization',
): IntentExample {
  return { id, input: goal, text: goal, expected, tags: [], partition };
}

const OPTIMIZATION: IntentExample[] = [
  example('dentist', 'Patients make appointments with dentists.', {
    appType: 'booking',
    entities: [
      { name: 'Patient', role: 'party' },
      { name: 'Appointment', role: 'commitment' },
      { name: 'Dentist', role: 'party' },
    ],
  }),
  example('salon', 'Clients make appointments with stylists online.', {
    appType: 'booking',
    entities: [
      { name: 'Client', role: 'party' },
      { name: 'Appointment', role: 'commitment' },
    ],
  }),
  example('groomer', 'Owners make appointments for their dogs with groomers.', {
    appType: 'booking',
    entities: [
      { name: 'Owner', role: 'party' },
      { name: 'Appointment', role: 'commitment' },
      { name: 'Dog', role: 'resource' },
    ],
  }),
  example('support', 'Customers raise tickets that agents resolve.', {
    appType: 'helpdesk',
    entities: [
      { name: 'Customer', role: 'party' },
      { name: 'Ticket', role: 'document' },
    ],
  }),
];
// Must never influence the proposer.
const SHADOW = example('vet', 'A veterinarian runs appointments for horses.', { appType: 'events' }, 'shadow');

const executor = createOfflineExecutor();

async function evaluate(text: string, partition = 'optimization'): Promise<PartitionScore> {
  const examples: ExampleScoreRecord[] = [];
  let sum = 0;
  let valid = 0;
  for (const item of OPTIMIZATION) {
    const score = scoreExample(
      item.expected,
      await executor.execute({ input: item.input, text: item.text, artifact: text, repeat: 0 }),
    );
    examples.push({ ...score, exampleId: item.id, repeat: 0 });
    if (score.valid) {
      sum += score.composite;
      valid += 1;
    }
  }
  const composite = valid === 0 ? null : sum / valid;
  return {
    partition,
    artifactHash: contentHash(text),
    fingerprint: 'test',
    repeats: 1,
    composite,
    components: {},
    metrics: { entityPrecision: null, relationRecall: null, projectionCoverage: null },
    invalid: OPTIMIZATION.length - valid,
    transient: 0,
    total: OPTIMIZATION.length,
    runComposites: [composite],
    examples,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    latencyMs: 0,
  };
}

async function contextFor(
  overrides: Partial<ProposalContext> = {},
): Promise<ProposalContext & { evaluations: () => number }> {
  let evaluations = 0;
  return {
    incumbentText: PLAYBOOK,
    instructions: '',
    constraints: '',
    limits: { editableSections: [], maxArtifactCharacters: 10_000 },
    examples: [...OPTIMIZATION, SHADOW],
    incumbentScores: await evaluate(PLAYBOOK),
    evaluateOptimization: (text) => {
      evaluations += 1;
      return evaluate(text);
    },
    history: [],
    triedHashes: new Set([contentHash(PLAYBOOK)]),
    maxCandidates: 5,
    random: () => 0.5,
    evaluations: () => evaluations,
    ...overrides,
  };
}

describe('error-driven proposer', () => {
  it('proposes the edit that fixes the planted error, ranked by net fixes', async () => {
    const proposer = createErrorDrivenProposer();
    expect(proposer.id).toBe(ERROR_DRIVEN_PROPOSER_ID);
    const context = await contextFor();
    const { candidates, failures } = await proposer.propose(context);
    expect(failures).toEqual([]);
    expect(candidates.length).toBeGreaterThan(0);
    expect(candidates.length).toBeLessThanOrEqual(5);
    const fix = candidates.find((candidate) => candidate.delta === 'appTypeCues.booking += "appointment"');
    expect(fix).toBeDefined();
    expect(fix!.expectedNetFixes).toBe(3);
    expect(fix!.rationale).toContain('3 optimization example(s)');
    const parsed = parsePlaybook(fix!.text);
    expect(parsed.ok && parsed.playbook.appTypeCues.booking?.map((cue) => cue.cue)).toEqual(['book', 'appointment']);
    expect(fix!.text.startsWith('# Fixture playbook\n')).toBe(true);

    // Every candidate really has positive net fixes, ranked best first.
    const nets = candidates.map((candidate) => candidate.expectedNetFixes ?? 0);
    expect(nets.every((net) => net > 0)).toBe(true);
    expect([...nets].sort((a, b) => b - a)).toEqual(nets);
    // Nothing read from the shadow example.
    expect(candidates.some((candidate) => /veterinarian|horse/.test(candidate.delta))).toBe(false);
    expect(context.evaluations()).toBeLessThanOrEqual(60);
  });

  it('is deterministic', async () => {
    const first = await createErrorDrivenProposer().propose(await contextFor());
    const second = await createErrorDrivenProposer().propose(await contextFor());
    expect(second.candidates.map((candidate) => candidate.delta)).toEqual(
      first.candidates.map((candidate) => candidate.delta),
    );
  });

  it('respects the editable sections', async () => {
    const { candidates } = await createErrorDrivenProposer().propose(
      await contextFor({ limits: { editableSections: ['entityTerms'], maxArtifactCharacters: 10_000 } }),
    );
    expect(candidates.length).toBeGreaterThan(0);
    expect(candidates.every((candidate) => candidate.delta.startsWith('entityTerms'))).toBe(true);
    expect(candidates.map((candidate) => candidate.delta)).toContain('entityTerms.appointment = "commitment"');
  });

  it('skips tried hashes and respects the length ceiling', async () => {
    const fixed = applyPlaybookEdit(PLAYBOOK, { op: 'add', path: ['appTypeCues', 'booking'], value: 'appointment' })!;
    const { candidates } = await createErrorDrivenProposer().propose(
      await contextFor({ triedHashes: new Set([contentHash(PLAYBOOK), contentHash(fixed)]) }),
    );
    expect(candidates.some((candidate) => candidate.text === fixed)).toBe(false);

    const tight = await createErrorDrivenProposer().propose(
      await contextFor({ limits: { editableSections: [], maxArtifactCharacters: PLAYBOOK.length } }),
    );
    expect(tight.candidates.every((candidate) => candidate.text.length <= PLAYBOOK.length)).toBe(true);
    expect(tight.candidates.some((candidate) => candidate.delta.includes('appointment'))).toBe(false);
  });

  it('caps evaluations and honours maxCandidates = 0', async () => {
    const context = await contextFor();
    await createErrorDrivenProposer({ maxEvaluations: 2 }).propose(context);
    expect(context.evaluations()).toBe(2);
    const none = await contextFor({ maxCandidates: 0 });
    expect((await createErrorDrivenProposer().propose(none)).candidates).toEqual([]);
    expect(none.evaluations()).toBe(0);
  });

  it('rebases its edit onto a newer incumbent', async () => {
    const { candidates } = await createErrorDrivenProposer().propose(await contextFor());
    const fix = candidates.find((candidate) => candidate.delta === 'appTypeCues.booking += "appointment"')!;
    const newer = applyPlaybookEdit(PLAYBOOK, { op: 'add', path: ['stopList'], value: 'dog' })!;
    const rebased = fix.rebase!(newer);
    expect(rebased).not.toBeNull();
    const parsed = parsePlaybook(rebased!);
    expect(parsed.ok && parsed.playbook.stopList).toEqual(['app', 'dog']);
    expect(parsed.ok && parsed.playbook.appTypeCues.booking?.map((cue) => cue.cue)).toEqual(['book', 'appointment']);
    // Already applied: nothing to do.
    expect(fix.rebase!(fix.text)).toBeNull();
  });

  it('stops when aborted and does not repeat deltas from the history', async () => {
    const controller = new AbortController();
    controller.abort();
    const aborted = await contextFor({ signal: controller.signal });
    expect((await createErrorDrivenProposer().propose(aborted)).candidates).toEqual([]);
    expect(aborted.evaluations()).toBe(0);

    const delta = 'appTypeCues.booking += "appointment"';
    const withHistory = await contextFor({ history: [{ delta, decision: 'refused', reason: 'specialization' }] });
    const { candidates } = await createErrorDrivenProposer().propose(withHistory);
    expect(candidates.map((candidate) => candidate.delta)).not.toContain(delta);
  });

  it('refuses scores that are not from the optimization partition', async () => {
    const context = await contextFor();
    const result = await createErrorDrivenProposer().propose({
      ...context,
      incumbentScores: { ...context.incumbentScores, partition: 'shadow' },
    });
    expect(result.candidates).toEqual([]);
    expect(result.failures[0]?.reason).toContain('optimization');
  });

  it('works without local screening', async () => {
    const context = await contextFor();
    const { candidates } = await createErrorDrivenProposer({ localScreening: false }).propose(context);
    expect(candidates.map((candidate) => candidate.delta)).toContain('appTypeCues.booking += "appointment"');
  });
});
