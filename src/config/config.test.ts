import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../errors.ts';
import { loadProgram } from '../program/program.ts';
import {
  DEFAULT_FUTILITY_LEVEL,
  DEFAULT_RACING_BATCH_SIZE,
  expandGlob,
  loadStudyConfig,
  racingSettingsOf,
} from './config.ts';
import { checkComposition, composeHeadline, composeTask, composeWeights } from '../study/compose.ts';

const exampleDir = fileURLToPath(new URL('../../examples/intent/', import.meta.url));
const directories: string[] = [];

afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A study folder with an artifact, a program and one corpus file. */
function study(config: string): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'kloop-config-'));
  directories.push(directory);
  writeFileSync(path.join(directory, 'kloop.yaml'), config);
  writeFileSync(path.join(directory, 'playbook.yaml'), 'appTypeCues: {}\n');
  writeFileSync(path.join(directory, 'program.md'), '# Instructions\na\n# Constraints\nb\n# Stopping criteria\nc\n');
  mkdirSync(path.join(directory, 'corpus'));
  writeFileSync(path.join(directory, 'corpus', 'a.yaml'), '[]\n');
  return directory;
}

function thrown(action: () => unknown): InputError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError');
}

const minimal = 'artifact: playbook.yaml\ncorpus: [corpus/*.yaml]\n';

describe('loadStudyConfig', () => {
  it('applies every default and resolves paths', () => {
    const directory = study(minimal);
    const config = loadStudyConfig(directory);
    expect(config.dir).toBe(directory);
    expect(config.artifact).toBe(path.join(directory, 'playbook.yaml'));
    expect(config.program).toBe(path.join(directory, 'program.md'));
    expect(config.corpus).toEqual([path.join(directory, 'corpus/*.yaml')]);
    expect(config.corpusFiles).toEqual([path.join(directory, 'corpus', 'a.yaml')]);
    expect(config.task).toBe('intent');
    expect(config.executor).toEqual({ kind: 'offline' });
    expect(config.proposer).toEqual({ kind: 'error-driven', candidatesPerRound: 6, concurrency: 4 });
    expect(config.gate).toEqual({
      alpha: 0.05,
      repeats: 1,
      shadowAlpha: 0.05,
      generalizationRatio: 0.5,
      shadowMarginSe: 1,
      anchorTolerance: 0,
      minDeltaDistance: 0.2,
      retrials: 2,
      thresholdK: 1,
      anchorK: 3,
      calibrationWindow: 5,
      minCohensD: 0.5,
      noiseRepeats: 8,
      signalRepeats: 3,
      adaptiveRepeats: true,
    });
    expect(config.stopping).toEqual({
      maxExperiments: 60,
      plateauRounds: 3,
      plateauMinSpent: 0,
      idleRounds: 2,
      maxConsecutiveFailures: 5,
    });
    expect(config.seed).toBe(1);
    expect(config.corpusPolicy).toEqual({
      graduateAfterDecisions: 20,
      rotateSlice: 3,
      maxShadowExposures: 40,
      graduateAfterRounds: 5,
      partialGold: false,
    });
    expect(config.task).toBe('intent');
    expect(config.weights).toBeUndefined();
    // The weights are the task's defaults once the task is built.
    expect(composeWeights(composeTask(config).task, config)).toEqual({
      appType: 0.25,
      entityRecall: 0.35,
      roleAccuracy: 0.2,
      behaviorCoverage: 0.2,
      entityPrecision: 0,
      relationRecall: 0,
    });
  });

  it('keeps a configured 0 as 0', () => {
    const config = loadStudyConfig(
      study(
        `${minimal}executor: { kind: llm, model: "openai:gpt-4.1-mini", temperature: 0 }\nproposer: { kind: reflective }\ngate: { generalizationRatio: 0, shadowMarginSe: 0, thresholdK: 0, minDeltaDistance: 0 }\n` +
          'stopping: { maxExperiments: 0, maxRounds: 0, target: 0 }\nseed: 0\ncorpusPolicy: { rotateSlice: 0 }\nweights: { appType: 0 }\n',
      ),
    );
    expect(config.executor.temperature).toBe(0);
    expect(config.gate.generalizationRatio).toBe(0);
    expect(config.gate.shadowMarginSe).toBe(0);
    expect(config.gate.thresholdK).toBe(0);
    expect(config.gate.minDeltaDistance).toBe(0);
    expect(config.stopping).toMatchObject({ maxExperiments: 0, maxRounds: 0, target: 0 });
    expect(config.seed).toBe(0);
    expect(config.corpusPolicy.rotateSlice).toBe(0);
    expect(config.weights).toEqual({ appType: 0 });
    expect(composeWeights(composeTask(config).task, config)).toEqual({
      appType: 0,
      entityRecall: 0.35,
      roleAccuracy: 0.2,
      behaviorCoverage: 0.2,
      entityPrecision: 0,
      relationRecall: 0,
    });
  });

  it('reads gate.racing as a switch or its settings, on by default for a non-deterministic executor only', () => {
    const racing = (text: string) => loadStudyConfig(study(`${minimal}${text}`)).gate.racing;
    expect(racing('')).toBeUndefined();
    expect(racingSettingsOf(undefined, false)).toEqual({
      batchSize: DEFAULT_RACING_BATCH_SIZE,
      futilityLevel: DEFAULT_FUTILITY_LEVEL,
    });
    expect(racingSettingsOf(undefined, true)).toBeUndefined();
    expect(racingSettingsOf(racing('gate: { racing: false }'), false)).toBeUndefined();
    expect(racingSettingsOf(racing('gate: { racing: true }'), true)).toEqual({ batchSize: 20, futilityLevel: 0.05 });
    // Settings alone keep the default switch (on for a sampled model); `enabled` overrides it; a configured 0 is 0.
    expect(racingSettingsOf(racing('gate: { racing: { batchSize: 8 } }'), true)).toBeUndefined();
    expect(racingSettingsOf(racing('gate: { racing: { batchSize: 8, futilityLevel: 0 } }'), false)).toEqual({
      batchSize: 8,
      futilityLevel: 0,
    });
    expect(racingSettingsOf(racing('gate: { racing: { enabled: true, batchSize: 8 } }'), true)).toEqual({
      batchSize: 8,
      futilityLevel: 0.05,
    });
    expect(racingSettingsOf(racing('gate: { racing: { enabled: false } }'), false)).toBeUndefined();
    // Early acceptance: off by default (absent from the settings), its test shared-variance unless set.
    expect(racingSettingsOf(racing('gate: { racing: { earlyAcceptance: off } }'), false)).toEqual({
      batchSize: 20,
      futilityLevel: 0.05,
    });
    expect(racingSettingsOf(racing('gate: { racing: { earlyAcceptance: obrien-fleming } }'), false)).toEqual({
      batchSize: 20,
      futilityLevel: 0.05,
      earlyAcceptance: 'obrien-fleming',
      earlyTest: 'shared-variance',
    });
    expect(
      racingSettingsOf(racing('gate: { racing: { earlyAcceptance: haybittle-peto, earlyTest: gate } }'), false),
    ).toMatchObject({ earlyAcceptance: 'haybittle-peto', earlyTest: 'gate' });
    expect(thrown(() => racing('gate: { racing: { earlyAcceptance: pocock } }')).message).toContain('gate.racing');
    const zero = thrown(() => racing('gate:\n  racing:\n    batchSize: 0\n'));
    expect(zero.message).toContain('kloop.yaml:5');
    expect(zero.message).toContain('gate.racing.batchSize');
    expect(thrown(() => racing('gate: { racing: { futilityLevel: 1 } }')).message).toContain(
      'gate.racing.futilityLevel',
    );
    expect(thrown(() => racing('gate: { racing: { batchsize: 8 } }')).message).toContain('batchsize');
  });

  it('names an unknown key and its line', () => {
    const directory = study(`${minimal}gate:\n  alpha: 0.1\n  alpah: 0.2\n`);
    const error = thrown(() => loadStudyConfig(directory));
    expect(error.line).toBe(5);
    expect(error.field).toBe('gate.alpah');
    expect(error.message).toMatch(
      /kloop\.yaml:5: gate\.alpah: unknown key "alpah" \(allowed: alpha, shadowAlpha, repeats,/,
    );
    const topLevel = thrown(() => loadStudyConfig(study(`${minimal}\n\nseeds: 3\n`)));
    expect(topLevel.message).toMatch(/kloop\.yaml:5: seeds: unknown key "seeds"/);
  });

  it('names the file, line and field of a wrong type or value', () => {
    const error = thrown(() => loadStudyConfig(study(`${minimal}stopping:\n  plateauRounds: three\n`)));
    expect(error.file).toMatch(/kloop\.yaml$/);
    expect(error.line).toBe(4);
    expect(error.field).toBe('stopping.plateauRounds');
    expect(error.message).toMatch(/kloop\.yaml:4: stopping\.plateauRounds: .*expected number/);
    expect(thrown(() => loadStudyConfig(study(`${minimal}gate: { alpha: 1.5 }\n`))).field).toBe('gate.alpha');
    expect(thrown(() => loadStudyConfig(study(`${minimal}executor: { kind: llm }\n`))).message).toMatch(
      /kloop\.yaml:3: executor\.model: an llm executor needs a model/,
    );
    expect(thrown(() => loadStudyConfig(study('artifact: playbook.yaml\ncorpus: [corpus/*.txt]\n'))).message).toMatch(
      /kloop\.yaml:2: corpus\[0\]: a corpus file must end in/,
    );
    expect(thrown(() => loadStudyConfig(study('corpus: [corpus/*.yaml]\n'))).message).toMatch(
      /kloop\.yaml:1: artifact: required/,
    );
  });

  it('reports a missing file, malformed YAML and missing referenced files', () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'kloop-config-'));
    directories.push(empty);
    expect(thrown(() => loadStudyConfig(empty)).message).toMatch(/kloop\.yaml: file not found/);
    const malformed = thrown(() => loadStudyConfig(study(`${minimal}gate: { alpha: 0.1\n`)));
    expect(malformed.message).toMatch(/kloop\.yaml:\d+: malformed YAML/);
    expect(malformed.line).toBeGreaterThanOrEqual(3);
    expect(thrown(() => loadStudyConfig(study('artifact: missing.yaml\ncorpus: [corpus/*.yaml]\n'))).message).toMatch(
      /kloop\.yaml:1: artifact: file not found: .*missing\.yaml/,
    );
    expect(
      thrown(() => loadStudyConfig(study('artifact: playbook.yaml\ncorpus:\n  - corpus/*.yaml\n  - extra.jsonl\n')))
        .message,
    ).toMatch(/kloop\.yaml:4: corpus\[1\]: file not found/);
    expect(thrown(() => loadStudyConfig(study('artifact: playbook.yaml\ncorpus: corpus/*.jsonl\n'))).message).toMatch(
      /kloop\.yaml:2: corpus: the corpus pattern "corpus\/\*\.jsonl" matches no file/,
    );
  });

  it('names each corpus pattern that matches no file, with its line', () => {
    const message = thrown(() =>
      loadStudyConfig(study('artifact: playbook.yaml\ncorpus:\n  - corpus/*.yaml\n  - corpus/*.jsonl\n')),
    ).message;
    expect(message).toMatch(/kloop\.yaml:4: corpus\[1\]: the corpus pattern "corpus\/\*\.jsonl" matches no file/);
  });

  it('expands globs, including ** and {a,b}', () => {
    const directory = study(minimal);
    mkdirSync(path.join(directory, 'corpus', 'deep', 'er'), { recursive: true });
    writeFileSync(path.join(directory, 'corpus', 'deep', 'er', 'b.jsonl'), '');
    writeFileSync(path.join(directory, 'corpus', '.hidden.yaml'), '');
    expect(expandGlob(path.join(directory, 'corpus', '**', '*.{yaml,jsonl}'))).toEqual([
      path.join(directory, 'corpus', 'a.yaml'),
      path.join(directory, 'corpus', 'deep', 'er', 'b.jsonl'),
    ]);
    expect(expandGlob(path.join(directory, 'corpus', '**', '*.jsonl'))).toEqual([
      path.join(directory, 'corpus', 'deep', 'er', 'b.jsonl'),
    ]);
    expect(expandGlob(path.join(directory, 'corpus', '*.y?ml'))).toEqual([path.join(directory, 'corpus', 'a.yaml')]);
  });

  it('loads the example study configuration and program', () => {
    const directory = study('');
    cpSync(path.join(exampleDir, 'kloop.yaml'), path.join(directory, 'kloop.yaml'));
    cpSync(path.join(exampleDir, 'program.md'), path.join(directory, 'program.md'));
    writeFileSync(path.join(directory, 'corpus', 'b.jsonl'), ''); // the example's second pattern, corpus/*.jsonl, must match too
    const config = loadStudyConfig(directory);
    expect(config.seed).toBe(7);
    expect(config.executor.kind).toBe('offline');
    expect(config.proposer.kind).toBe('error-driven');
    expect(config.corpusFiles).toEqual([
      path.join(directory, 'corpus', 'a.yaml'),
      path.join(directory, 'corpus', 'b.jsonl'),
    ]);
    expect(loadProgram(config.program).mechanical.editableSections).toContain('behaviorCues');
  });

  it.skipIf(!existsSync(path.join(exampleDir, 'playbook.yaml')) || !existsSync(path.join(exampleDir, 'corpus')))(
    'loads the example study in place',
    () => {
      const config = loadStudyConfig(exampleDir);
      expect(config.corpusFiles.length).toBeGreaterThan(0);
    },
  );
});

describe('task, executor and weights in kloop.yaml', () => {
  it('reads the task as a kind or an object, and builds it with its settings', () => {
    const config = loadStudyConfig(
      study(
        `${minimal}task:\n  kind: classification\n  labels: [billing, technical, account]\n  reportAs: misroute rate\nexecutor: { kind: routing-rules }\n`,
      ),
    );
    expect(config.task).toEqual({
      kind: 'classification',
      labels: ['billing', 'technical', 'account'],
      reportAs: 'misroute rate',
    });
    const { task, exampleFormat } = composeTask(config);
    expect(task.id).toMatch(/^classification@1:[0-9a-f]{8}$/);
    expect(task.outcome).toBe('binary');
    expect(exampleFormat.inputField).toBe('input');
    expect(composeHeadline(task)).toEqual({ name: 'misroute rate', complement: true });
    expect(composeWeights(task, config)).toEqual({ accuracy: 1 });
    expect(composeTask(loadStudyConfig(study(minimal))).exampleFormat.inputField).toBe('goal');
  });

  it("refuses a weight the task does not have, naming its line and the task's components", () => {
    const config = loadStudyConfig(study(`${minimal}weights:\n  appType: 0.3\n  entityRecal: 0.4\n`));
    const error = thrown(() => composeWeights(composeTask(config).task, config));
    expect(error.line).toBe(5);
    expect(error.field).toBe('weights.entityRecal');
    expect(error.detail).toBe(
      'unknown component "entityRecal": the intent-scorer@1 task\'s components are appType, entityRecall, roleAccuracy, behaviorCoverage, entityPrecision, relationRecall',
    );
    const zero = loadStudyConfig(
      study(`${minimal}weights: { appType: 0, entityRecall: 0, roleAccuracy: 0, behaviorCoverage: 0 }\n`),
    );
    expect(thrown(() => composeWeights(composeTask(zero).task, zero)).detail).toBe(
      'at least one weight must be above 0',
    );
  });

  it('locates a bad task setting under task, with its line', () => {
    const config = loadStudyConfig(study(`${minimal}task:\n  kind: classification\n  labels: [billing, billing]\n`));
    const error = thrown(() => composeTask(config));
    expect(error.field).toBe('task.labels');
    expect(error.line).toBe(5);
    expect(error.detail).toMatch(/labels must be unique/);
    expect(thrown(() => composeTask(loadStudyConfig(study(`${minimal}task: classification\n`)))).detail).toMatch(
      /needs its labels/,
    );
    expect(
      thrown(() => composeTask(loadStudyConfig(study(`${minimal}task: { kind: custom, module: score.ts }\n`)))).detail,
    ).toMatch(/loadStudyAsync/);
  });

  it("validates the command executor's keys and refuses them on other executors", () => {
    const command = loadStudyConfig(
      study(
        `${minimal}executor: { kind: command, command: [node, route.mjs], timeoutMs: 5000, concurrency: 2 }\nproposer: { kind: reflective, model: "openai:gpt-4.1-mini" }\n`,
      ),
    );
    expect(command.executor).toEqual({
      kind: 'command',
      command: ['node', 'route.mjs'],
      timeoutMs: 5000,
      concurrency: 2,
    });
    expect(thrown(() => loadStudyConfig(study(`${minimal}executor: { kind: command }\n`))).field).toBe(
      'executor.command',
    );
    const misplaced = thrown(() => loadStudyConfig(study(`${minimal}executor:\n  kind: offline\n  concurrency: 2\n`)));
    expect(misplaced.field).toBe('executor.concurrency');
    expect(misplaced.line).toBe(5);
  });

  it('keeps a configured 0 of the proposer limits as 0', () => {
    const config = loadStudyConfig(study(`${minimal}proposer: { maxEvaluations: 0, maxScreened: 0 }\n`));
    expect(config.proposer).toEqual({
      kind: 'error-driven',
      candidatesPerRound: 6,
      concurrency: 4,
      maxEvaluations: 0,
      maxScreened: 0,
    });
  });

  it('refuses, by name and line, a key that would do nothing for this study', () => {
    const cases: Array<[string, string, number, RegExp]> = [
      [
        'executor:\n  kind: offline\n  temperature: 0\n',
        'executor.temperature',
        5,
        /temperature applies to an llm executor only/,
      ],
      [
        'executor:\n  kind: routing-rules\n  model: "openai:gpt-4.1-mini"\n',
        'executor.model',
        5,
        /model applies to an llm executor only/,
      ],
      [
        'executor: { kind: command, command: [node, run.mjs], maxOutputTokens: 64 }\n',
        'executor.maxOutputTokens',
        3,
        /maxOutputTokens applies to an llm executor only/,
      ],
      [
        'executor: { kind: offline, baseURL: "http://127.0.0.1:8080/v1" }\n',
        'executor.baseURL',
        3,
        /baseURL applies to an llm executor only/,
      ],
      [
        'executor: { kind: offline, apiKeyEnv: MY_KEY }\n',
        'executor.apiKeyEnv',
        3,
        /apiKeyEnv applies to an llm executor only/,
      ],
      [
        'executor:\n  kind: offline\n  timeoutMs: 100\n',
        'executor.timeoutMs',
        5,
        /timeoutMs applies to an llm or command executor only/,
      ],
      [
        'proposer:\n  kind: error-driven\n  model: "openai:gpt-4.1-mini"\n',
        'proposer.model',
        5,
        /model applies to a reflective proposer only/,
      ],
      [
        'executor: { kind: llm, model: "openai:gpt-4.1-mini" }\nproposer:\n  kind: reflective\n  maxEvaluations: 0\n',
        'proposer.maxEvaluations',
        6,
        /maxEvaluations applies to the error-driven proposer only/,
      ],
      [
        'executor: { kind: llm, model: "openai:gpt-4.1-mini" }\nproposer:\n  kind: reflective\n  maxScreened: 10\n',
        'proposer.maxScreened',
        6,
        /maxScreened applies to the error-driven proposer only/,
      ],
      [
        'task: { kind: classification, labels: [a, b] }\ncorpusPolicy:\n  partialGold: false\n',
        'corpusPolicy.partialGold',
        5,
        /partialGold applies to intent studies only/,
      ],
      [
        'task: { kind: classification, labels: [a, b] }\nschedule:\n  slow: "0 3 * * 1"\n',
        'schedule.slow',
        5,
        /Loops A, C and D work on intent studies only/,
      ],
      [
        'task: { kind: classification, labels: [a, b] }\nschedule:\n  loops: { C: "0 3 * * 1" }\n',
        'schedule.loops.C',
        5,
        /write "off", or leave the key out/,
      ],
    ];
    for (const [yaml, field, line, message] of cases) {
      const error = thrown(() => loadStudyConfig(study(`${minimal}${yaml}`)));
      expect(error.field, yaml).toBe(field);
      expect(error.line, yaml).toBe(line);
      expect(error.detail, yaml).toMatch(message);
    }
    // What does apply is kept: the command executor's timeout, a slow loop switched off on a classification study.
    expect(
      loadStudyConfig(study(`${minimal}executor: { kind: command, command: [node, run.mjs], timeoutMs: 100 }\n`))
        .executor.timeoutMs,
    ).toBe(100);
    expect(
      loadStudyConfig(
        study(
          `${minimal}task: { kind: classification, labels: [a, b] }\nschedule: { loops: { A: "off", B: "0 * * * *" } }\n`,
        ),
      ).schedule?.loops,
    ).toEqual({ A: 'off', B: '0 * * * *' });
  });

  it('refuses executors, proposers and tasks that do not go together, naming the key', () => {
    const offlineClassification = loadStudyConfig(
      study(`${minimal}task: { kind: classification, labels: [a, b] }\nexecutor: { kind: offline }\n`),
    );
    const error = thrown(() => checkComposition(offlineClassification, composeTask(offlineClassification).task));
    expect(error.field).toBe('executor.kind');
    expect(error.detail).toMatch(/needs task intent/);
    const rulesOnIntent = loadStudyConfig(study(`${minimal}executor: { kind: routing-rules }\n`));
    expect(thrown(() => checkComposition(rulesOnIntent, composeTask(rulesOnIntent).task)).detail).toMatch(
      /needs a classification task/,
    );
    const tblOnLlm = loadStudyConfig(study(`${minimal}executor: { kind: llm, model: "openai:gpt-4.1-mini" }\n`));
    const tbl = thrown(() => checkComposition(tblOnLlm, composeTask(tblOnLlm).task));
    expect(tbl.field).toBe('proposer.kind');
    expect(tbl.detail).toMatch(/use proposer.kind: reflective/);
  });
});
