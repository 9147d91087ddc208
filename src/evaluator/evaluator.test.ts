import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Example } from '../corpus/example.ts';
import { InputError } from '../errors.ts';
import type { ExecutionRequest, Executor } from '../executors/executor.ts';
import { openDatabase } from '../storage/database.ts';
import { createClassificationTask } from '../tasks/classification/classification-task.ts';
import { intentTask } from '../tasks/intent/intent-task.ts';
import type { Task } from '../tasks/task.ts';
import { loadStudy } from '../study/load-study.ts';
import { computeFingerprint, createEvaluator, fingerprintWeights, SCORER_ERROR, scoreExecution } from './evaluator.ts';
import { openNotebook } from '../storage/notebook/index.ts';

const labels = createClassificationTask({ labels: ['billing', 'technical', 'account'], reportAs: 'misroute rate' });

function ticket(id: string, input: unknown, label: string): Example {
  return {
    id,
    input,
    text: typeof input === 'string' ? input : JSON.stringify(input),
    expected: { label },
    tags: [],
    partition: 'optimization',
  };
}

const tickets = [
  ticket('t1', 'I was charged twice', 'billing'),
  ticket('t2', 'The app crashes on start', 'technical'),
  ticket('t3', 'Reset my password', 'account'),
];

/** An executor that answers what `answer` gives for a request, and records the requests. */
function scripted(answer: (request: ExecutionRequest) => unknown): Executor & { requests: ExecutionRequest[] } {
  const requests: ExecutionRequest[] = [];
  return {
    id: 'scripted@1',
    deterministic: true,
    requests,
    execute: async (request) => {
      requests.push(request);
      return { ok: true, output: answer(request) };
    },
  };
}

describe('the evaluator on a task and an executor', () => {
  it('sends { input, text, artifact, repeat, exampleId } and scores the output with the task', async () => {
    const executor = scripted((request) => ({ label: request.text.includes('charged') ? 'billing' : 'technical' }));
    const evaluator = createEvaluator({ task: labels, executor, corpus: tickets });
    const score = await evaluator.evaluate({ artifactText: 'rules', partition: 'optimization', examples: tickets });
    expect(
      executor.requests.map(({ input, text, artifact, repeat, exampleId }) => ({
        input,
        text,
        artifact,
        repeat,
        exampleId,
      })),
    ).toEqual([
      { input: 'I was charged twice', text: 'I was charged twice', artifact: 'rules', repeat: 0, exampleId: 't1' },
      {
        input: 'The app crashes on start',
        text: 'The app crashes on start',
        artifact: 'rules',
        repeat: 0,
        exampleId: 't2',
      },
      { input: 'Reset my password', text: 'Reset my password', artifact: 'rules', repeat: 0, exampleId: 't3' },
    ]);
    expect(score.composite).toBeCloseTo(2 / 3, 12);
    expect(score.components).toEqual({ accuracy: 2 / 3 });
    expect(score.metrics).toEqual({});
    expect(score.examples[2]).toEqual({
      valid: true,
      composite: 0,
      components: { accuracy: 0 },
      skipped: [],
      metrics: {},
      diagnostics: { expected: 'account', predicted: 'technical' },
      feedback: 'expected account, routed to technical',
      exampleId: 't3',
      repeat: 0,
    });
  });

  it("counts an output that does not fit the task's output schema as invalid (schema), never scored", async () => {
    let scored = 0;
    const spy: Task = {
      ...labels,
      score: (...args) => ((scored += 1), labels.score(...(args as Parameters<typeof labels.score>))),
    };
    const executor = scripted((request) => (request.exampleId === 't2' ? { label: 'shipping' } : { label: 'billing' }));
    const score = await createEvaluator({ task: spy, executor, corpus: tickets }).evaluate({
      artifactText: 'rules',
      partition: 'optimization',
      examples: tickets,
    });
    expect(scored).toBe(2);
    expect(score.invalid).toBe(1);
    expect(score.total).toBe(3);
    const record = score.examples[1]!;
    expect(record).toMatchObject({
      valid: false,
      invalidReason: 'schema',
      raw: '{"label":"shipping"}',
      exampleId: 't2',
    });
    expect(!record.valid && record.message).toMatch(
      /^the output does not fit the classification@1:[0-9a-f]{8} output schema: label: /,
    );
    expect('composite' in record).toBe(false);
  });

  it("passes the example's expected output, input and the weights to score; a scorer that throws gives an invalid scorer_error naming the example and the file", async () => {
    const seen: unknown[] = [];
    const task: Task<string, { n: number }, { n: number }> = {
      id: 'toy@1',
      schemas: { input: z.string(), expected: z.object({ n: z.number() }), output: z.object({ n: z.number() }) },
      components: [{ name: 'right', weight: 2, description: 'n matches' }],
      score: (output, expected, input, weights) => {
        seen.push({ output, expected, input, weights });
        if (input === 'boom') throw new InputError('the scorer broke', { code: 'custom_scorer', file: 'score.ts' });
        if (input === 'bang') throw new TypeError('x is undefined');
        return {
          composite: output.n === expected.n ? 1 : 0,
          components: { right: output.n === expected.n ? 1 : 0 },
          feedback: '',
        };
      },
    };
    const example = {
      id: 'e1',
      input: 'one',
      text: 'one',
      expected: { n: 1 },
      tags: [],
      partition: 'optimization' as const,
    };
    expect(scoreExecution(task as Task, example, { ok: true, output: { n: 1 } }, { right: 3 })).toEqual({
      valid: true,
      composite: 1,
      components: { right: 1 },
      skipped: [],
      metrics: {},
      diagnostics: {},
      feedback: '',
    });
    expect(seen).toEqual([{ output: { n: 1 }, expected: { n: 1 }, input: 'one', weights: { right: 3 } }]);
    // Peer fault 4 of issue #36: the scorer's failure on one output is that output's invalid score, not a crash of the run.
    expect(
      scoreExecution(
        task as Task,
        { ...example, id: 'e9', input: 'boom' },
        { ok: true, output: { n: 1 } },
        { right: 1 },
      ),
    ).toEqual({
      valid: false,
      invalidReason: SCORER_ERROR,
      message: 'the scorer failed on this output of example e9: score.ts: the scorer broke',
      raw: '{"n":1}',
    });
    expect(
      scoreExecution(
        task as Task,
        { ...example, id: 'e8', input: 'bang' },
        { ok: true, output: { n: 2 } },
        { right: 1 },
      ),
    ).toMatchObject({
      valid: false,
      invalidReason: SCORER_ERROR,
      message: 'the scorer failed on this output of example e8: TypeError: x is undefined',
    });
  });

  it('keeps failed executions invalid, and stores records with the feedback', async () => {
    const db = await openDatabase(':memory:');
    try {
      const executor: Executor = {
        id: 'failing@1',
        deterministic: true,
        execute: async (request) =>
          request.exampleId === 't1'
            ? { ok: false, reason: 'timeout', message: 'slow', transient: true }
            : { ok: true, output: { label: 'account' } },
      };
      const evaluator = createEvaluator({ task: labels, executor, corpus: tickets, results: openNotebook(db) });
      const score = await evaluator.evaluate({ artifactText: 'rules', partition: 'optimization', examples: tickets });
      expect(score).toMatchObject({ invalid: 1, transient: 1, total: 3 });
      const rows = await db
        .selectFrom('example_results')
        .select(['example_id', 'score'])
        .orderBy('example_id')
        .execute();
      // The transient failure is not stored; the others are, with their feedback.
      expect(rows.map((row) => row.example_id)).toEqual(['t2', 't3']);
      expect(JSON.parse(rows[0]!.score)).toMatchObject({
        valid: true,
        composite: 0,
        feedback: 'expected technical, routed to account',
      });
    } finally {
      await db.destroy();
    }
  });
});

describe('the evaluator fingerprint', () => {
  it('is unchanged for the intent study examples/intent (scorer id, weights in component order, corpus hash, executor id)', () => {
    const study = loadStudy(new URL('../../examples/intent/', import.meta.url).pathname);
    const evaluator = createEvaluator({
      task: study.task,
      executor: study.executor,
      corpus: study.corpus,
      weights: study.weights,
    });
    // The fingerprint of the offline main job (`kloop run examples/intent`) since executor offline-playbook@7 (issue 16: the layout reading, extraction.layoutCues).
    expect(evaluator.fingerprint).toBe('4c0c970dafc7bc05');
    expect(fingerprintWeights(intentTask.components!, study.weights)).toEqual([0.25, 0.35, 0.2, 0.2, 0.2, 0.1]);
  });

  it('leaves out trailing optional components the study leaves at 0, and only those', () => {
    const components = intentTask.components!;
    expect(
      fingerprintWeights(components, {
        appType: 0.25,
        entityRecall: 0.35,
        roleAccuracy: 0.2,
        behaviorCoverage: 0,
        entityPrecision: 0,
        relationRecall: 0,
      }),
    ).toEqual([0.25, 0.35, 0.2, 0]);
    expect(
      fingerprintWeights(components, {
        appType: 0.25,
        entityRecall: 0.35,
        roleAccuracy: 0.2,
        behaviorCoverage: 0.2,
        entityPrecision: 0,
        relationRecall: 0.1,
      }),
    ).toEqual([0.25, 0.35, 0.2, 0.2, 0, 0.1]);
    const base = { corpusVersion: 'c', scorerVersion: 's', executorId: 'e', components };
    expect(
      computeFingerprint({ ...base, weights: { appType: 1, entityRecall: 1, roleAccuracy: 1, behaviorCoverage: 1 } }),
    ).not.toBe(
      computeFingerprint({
        ...base,
        weights: { appType: 1, entityRecall: 1, roleAccuracy: 1, behaviorCoverage: 1, relationRecall: 0.5 },
      }),
    );
  });
});

describe('reading stored results only', () => {
  it('storedOnly executes nothing: the stored example-repeats are scored, the others counted as missing', async () => {
    const db = await openDatabase(':memory:');
    try {
      const executor = scripted(() => ({ label: 'billing' }));
      const evaluator = createEvaluator({ task: labels, executor, corpus: tickets, results: openNotebook(db) });
      await evaluator.evaluate({ artifactText: 'rules', partition: 'optimization', examples: tickets.slice(0, 2) });
      expect(executor.requests).toHaveLength(2);
      const partial = await evaluator.evaluate({
        artifactText: 'rules',
        partition: 'optimization',
        examples: tickets,
        storedOnly: true,
      });
      expect(executor.requests).toHaveLength(2); // nothing executed
      expect(partial).toMatchObject({ missing: 1, total: 2, invalid: 0, composite: 0.5 });
      expect(partial.examples.map((record) => record.exampleId)).toEqual(['t1', 't2']);
      const complete = await evaluator.evaluate({
        artifactText: 'rules',
        partition: 'optimization',
        examples: tickets.slice(0, 2),
        storedOnly: true,
      });
      expect(complete).toMatchObject({ missing: 0, total: 2 });
      const nothing = await evaluator.evaluate({
        artifactText: 'other rules',
        partition: 'optimization',
        examples: tickets,
        storedOnly: true,
        repeats: 2,
      });
      expect(nothing).toMatchObject({ missing: 6, total: 0, composite: null });
    } finally {
      await db.destroy();
    }
  });

  it('starts no new example after one fails (a budget error is not met again for every example left)', async () => {
    const many = Array.from({ length: 12 }, (_, index) => ticket(`m${index}`, `ticket ${index}`, 'billing'));
    let calls = 0;
    let releaseSecond: () => void = () => undefined;
    const executor: Executor = {
      id: 'failing@1',
      deterministic: true,
      execute: async () => {
        calls += 1;
        if (calls === 2) await new Promise<void>((resolve) => (releaseSecond = resolve)); // in flight when the third fails
        if (calls === 3) throw new Error('budget reached');
        return { ok: true, output: { label: 'billing' } };
      },
    };
    const evaluator = createEvaluator({ task: labels, executor, corpus: many, concurrency: 2 });
    await expect(
      evaluator.evaluate({ artifactText: 'rules', partition: 'optimization', examples: many }),
    ).rejects.toThrow('budget reached');
    releaseSecond();
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve)); // no I/O: the worker's continuation has run
    expect(calls).toBe(3); // the third failed; the call in flight beside it finished; nothing after (before: all 12)
  });
});
