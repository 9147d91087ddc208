/**
 * Pieces every `kloop init` template shares: the `kloop.yaml` blocks that
 * depend only on the executor (executor, gate, stopping), the program's
 * layout, and the corpus file's header.
 *
 * The kloop.yaml format is the engine's (ENGINE-SPEC, issue 12): `task:` as
 * a string (intent) or an object `{ kind, ... }`; `executor.kind` one of
 * `offline`, `llm`, `command`; `proposer.kind` `error-driven` (offline) or
 * `reflective` (a language model).
 *
 * @module
 */

/** Tasks `kloop init` writes a study for. */
export const INIT_TASKS = ['intent', 'classification', 'extraction', 'custom'] as const;
export type InitTask = (typeof INIT_TASKS)[number];

/** Executors `kloop init` can set up (`offline`: the intent playbook only). */
export const INIT_EXECUTORS = ['llm', 'command', 'offline'] as const;
export type InitExecutor = (typeof INIT_EXECUTORS)[number];

/** One file of a study, its path relative to the study folder (`/` separators). */
export interface StudyFile {
  path: string;
  text: string;
}

/**
 * What a task's template gives: the files, and the facts the seven steps
 * quote (see `seed-steps.ts`).
 */
export interface RenderedStudy {
  files: StudyFile[];
  /** The artifact's file name (what the loop edits). */
  artifact: string;
  /** Records written to `corpus/examples.yaml`. */
  sampleRecords: number;
  /** The metric in words, e.g. `misroute rate (1 − accuracy) over 4 labels`. */
  metric: string;
  /** Where to change the metric, e.g. `put your own queues in kloop.yaml (task.labels)`. */
  metricTodo: string;
  /** True when the metric itself is a sample the user must replace (custom: score.ts). */
  metricIsSample: boolean;
  /** The proposer kind written to kloop.yaml. */
  proposer: 'error-driven' | 'reflective';
}

/** A YAML double-quoted scalar (JSON's string syntax is valid YAML). */
export function yamlString(text: string): string {
  return JSON.stringify(text);
}

/** The model `kloop init` writes for a language model; a placeholder the user changes. */
export const PLACEHOLDER_MODEL = 'openai:gpt-4.1-mini';

/** Column at which the comments of kloop.yaml lines start. */
const COMMENT_COLUMN = 29;

/** A kloop.yaml line with its comment aligned: `key: value   # comment`. */
export function commented(text: string, comment: string): string {
  return `${text}${' '.repeat(Math.max(1, COMMENT_COLUMN - text.length))}# ${comment}`;
}

/** The header comment of every kloop.yaml. */
export function configHeader(title: string, lines: readonly string[]): string {
  return [
    `# kloop study: ${title}.`,
    '# Written by `kloop init`; the steps it printed are in docs/init.md.',
    '#',
    ...lines.map((line) => (line === '' ? '#' : `# ${line}`)),
    ...(lines.length > 0 ? ['#'] : []),
    '# Every key is checked: an unknown key or a wrong value is an error naming',
    "# its line. Absent keys take kloop's defaults, and a configured 0 means 0.",
    '# Paths are relative to this folder.',
    '',
  ].join('\n');
}

/** The `executor:` block for a kind. `maxOutputTokens` for an llm executor. */
export function executorBlock(
  executor: InitExecutor,
  options: { command?: readonly string[]; maxOutputTokens?: number; offlineComment?: string } = {},
): string {
  if (executor === 'offline') {
    return [
      'executor:',
      commented(
        '  kind: offline',
        options.offlineComment ?? 'deterministic, no API key, no network; run-to-run noise is 0',
      ),
      '',
    ].join('\n');
  }
  if (executor === 'command') {
    const argv = options.command ?? ['node', 'run.mjs'];
    return [
      'executor:',
      commented('  kind: command', 'any program: one JSON line on stdin, the answer as JSON on stdout'),
      commented(`  command: [${argv.join(', ')}]`, 'argv, run in this folder'),
      commented('  timeoutMs: 10000', 'per example; the program is killed after it (an invalid output, `timeout`)'),
      commented('  concurrency: 4', 'programs at once'),
      commented(
        '  deterministic: true',
        'run.mjs gives the same answer for the same input: no repeats needed (false for a program that samples)',
      ),
      '',
    ].join('\n');
  }
  return [
    'executor:',
    '  kind: llm',
    commented(
      `  model: ${PLACEHOLDER_MODEL}`,
      'provider:model — openai, anthropic, openai-compatible, ollama (or --model)',
    ),
    '  # baseURL: http://127.0.0.1:8080/v1   # a llama.cpp / vLLM / LM Studio server (or --base-url)',
    '  # apiKeyEnv: MY_SERVER_KEY            # NAME of the variable holding a key, never the key itself',
    '  temperature: 0',
    `  maxOutputTokens: ${options.maxOutputTokens ?? 512}`,
    '  timeoutMs: 60000',
    '',
  ].join('\n');
}

/** The `artifact:`, `program:` and `corpus:` keys. */
export function filesBlock(artifact: string, artifactComment: string): string {
  return [
    commented(`artifact: ${artifact}`, artifactComment),
    commented('program: program.md', 'Instructions, Constraints (with the invariants), Stopping criteria'),
    '',
    commented('corpus:', 'labelled examples; each record names its partition'),
    '  - corpus/*.yaml',
    '',
  ].join('\n');
}

/**
 * The `proposer:` block. An error-driven proposer keeps its own default
 * `maxEvaluations` (the keyword-rules proposer's 76: up to 40 single edits,
 * then its learned scores and bundles): a smaller budget spent on single
 * edits leaves none for the bundles a small corpus needs (issue 35: with 10,
 * twelve FAQ questions accepted nothing; with the default, a 5-edit bundle).
 */
export function proposerBlock(
  kind: 'error-driven' | 'reflective',
  comment: string,
  options: { model?: boolean } = {},
): string {
  const lines = ['proposer:', commented(`  kind: ${kind}`, comment)];
  if (kind === 'reflective') {
    lines.push(
      options.model === true
        ? commented(
            `  model: ${PLACEHOLDER_MODEL}`,
            "the proposer's model (the executor calls none); its key from the environment",
          )
        : "  # model: anthropic:claude-sonnet-4-5   # default: the executor's model",
    );
    // A program as executor: the proposer is the only model, and may be a server of the user's own.
    if (options.model === true)
      lines.push(
        '  # baseURL: http://127.0.0.1:8080/v1   # your own server: openai-compatible:<model>, ollama:<model> (or --base-url, OPENAI_BASE_URL, OLLAMA_HOST)',
      );
    lines.push('  candidatesPerRound: 4', '  concurrency: 2', '');
  } else {
    lines.push('  candidatesPerRound: 6', '  concurrency: 4', '');
  }
  return lines.join('\n');
}

/**
 * The `gate:` block. A deterministic executor (offline, the sample
 * command program) needs one repeat and no calibration; a sampled model
 * needs repeats and a calibration before the loop may trust a difference.
 */
export function gateBlock(executor: InitExecutor, options: { binary: boolean }): string {
  const test = options.binary
    ? "right/wrong outcomes: McNemar's exact test on the paired examples"
    : 'the paired t-test on per-example scores';
  const head = [
    'gate:',
    commented('  alpha: 0.05', `one-sided, on the optimization partition (${test})`),
    commented('  shadowAlpha: 0.05', 'the shadow partition must confirm the gain at this level'),
  ];
  if (executor === 'llm') {
    return [
      ...head,
      commented(
        '  repeats: 5',
        'a sampled model is noisy: every evaluation is repeated (5 detects 2σ gains 80% of the time)',
      ),
      commented(
        '  requireCalibration: true',
        'the run refuses to start before `kloop calibrate` (or `kloop run --calibrate`)',
      ),
      commented('  anchorTolerance: 0', 'no anchor example may drop beyond measured noise'),
      '',
    ].join('\n');
  }
  const why =
    executor === 'offline'
      ? 'the playbook extractor is deterministic'
      : 'run.mjs is deterministic (same input, same answer)';
  return [
    ...head,
    commented('  repeats: 1', `${why}: one evaluation per example`),
    commented(
      '  requireCalibration: false',
      'its run-to-run noise is 0; a program that samples needs true and repeats ≥ 3',
    ),
    commented('  noiseRepeats: 2', 'calibration: two runs show the noise is 0'),
    '  signalRepeats: 1',
    commented('  anchorTolerance: 0', 'no anchor example may drop'),
    '',
  ].join('\n');
}

/** The `stopping:` block and the seed. */
export function stoppingBlock(executor: InitExecutor): string {
  const lines = [
    commented('stopping:', 'the numbers the loop obeys (program.md says them in words)'),
    commented(`  maxExperiments: ${executor === 'llm' ? 12 : 30}`, 'candidates evaluated, study total'),
    commented('  plateauRounds: 2', 'rounds in a row without an accepted candidate'),
    commented('  maxConsecutiveFailures: 5', 'proposals or evaluations failing in a row: a problem, not a result'),
    `  maxRounds: ${executor === 'llm' ? 4 : 8}`,
  ];
  if (executor === 'llm')
    lines.push(commented('  maxCostUsd: 5', 'USD per run, at the prices in kloop (or --max-cost-usd)'));
  lines.push('', commented('seed: 7', 'every random choice (splits, proposals) follows it'), '');
  return lines.join('\n');
}

/** The Stopping criteria line of a study that pays for a language model. */
export const MONEY_STOP = '- the money budget is spent (`stopping.maxCostUsd`, or `--max-cost-usd`);';

/** The parts of a program.md. */
export interface ProgramParts {
  title: string;
  /** Paragraphs before the first register. */
  intro: string;
  /** The Instructions register's body. */
  instructions: string;
  /** Prose of the Constraints register, before the invariants. */
  constraints: string;
  /** What must never change, one line each. */
  invariants: readonly string[];
  /** The mechanical block's YAML lines (without the fence). */
  mechanical: readonly string[];
  /** Extra lines of the Stopping criteria register, after the shared ones. */
  stoppingExtra?: readonly string[];
}

/**
 * A program.md: the seed's three registers (Instructions, Constraints,
 * Stopping criteria), the invariants listed inside Constraints, and the
 * Constraints' fenced `yaml` block of checks code applies to every
 * candidate.
 *
 * The invariants are a `### The invariants` list inside the Constraints
 * register, not a `## Invariants` heading: kloop's program reader takes
 * "Invariants" as another name of the Constraints register, so a heading of
 * that name beside `## Constraints` is refused as a duplicate register.
 */
export function programMarkdown(parts: ProgramParts): string {
  return [
    `# Program: ${parts.title}`,
    '',
    parts.intro.trim(),
    '',
    'kloop reads the three registers below from their headings. Only the',
    "Constraints register's fenced `yaml` block is read by code; the rest is",
    'prose for the proposer and for the people who review the lab notebook.',
    '',
    '## Instructions',
    '',
    parts.instructions.trim(),
    '',
    '## Constraints',
    '',
    parts.constraints.trim(),
    '',
    '### The invariants',
    '',
    'What the loop must never change (the seed: "the agent changes variables',
    'but never touches invariants"):',
    '',
    ...parts.invariants.map((line) => `- ${line}`),
    '',
    'Checked by code on every candidate (keys `editableSections`,',
    '`maxArtifactCharacters`, `forbiddenText` (case-insensitive), `requiredText`',
    '(exact); any other key is an error):',
    '',
    '```yaml',
    ...parts.mechanical,
    '```',
    '',
    '## Stopping criteria',
    '',
    'Stop and report when any of these happens, and say which one it was:',
    '',
    '- the experiment budget is spent (`stopping.maxExperiments` in `kloop.yaml`);',
    '- no candidate has been accepted for `stopping.plateauRounds` rounds in a row',
    '  (a plateau);',
    ...(parts.stoppingExtra ?? []),
    '- `stopping.maxConsecutiveFailures` proposals or evaluations fail in a row',
    '  (an infrastructure problem, not a result).',
    '',
    'The report states how many candidates were proposed, evaluated, skipped and',
    'accepted, the composite of the seed and of the final artifact on every',
    'partition, and which accepted edits the shadow partition confirmed.',
    '',
  ].join('\n');
}

/**
 * The comment at the top of `corpus/examples.yaml`: the record format and the
 * partition rules (docs/corpus.md).
 */
export function corpusHeader(title: string, format: readonly string[]): string {
  return [
    `# ${title}`,
    '#',
    '# One record per example, exactly these fields:',
    ...format.map((line) => `#   ${line}`),
    '#   tags:      free labels for reports, e.g. [source:email, difficulty:hard]',
    '#   partition: optimization | anchor | shadow',
    '#',
    '# Partitions (named, never split silently):',
    '#   optimization  what the proposer learns from and the gate measures gains on;',
    '#   anchor        hand-chosen cases that must never get worse (3 or more);',
    '#   shadow        held out: the proposer never sees it; a gain must show here',
    '#                 too (5 or more). A record added after the first run enters',
    '#                 shadow first, whatever it says here (an anchor stays an anchor).',
    '# Aim for 15–25 real examples before `kloop run` (the seed: never cold-start),',
    '# about half optimization, a quarter or more shadow. Ids: letters, digits,',
    '# ".", "_", ":" and "-". Two records with (nearly) the same text in two',
    '# partitions are refused: that would leak one partition into the other.',
    '# More files: any corpus/*.yaml is read (kloop.yaml `corpus:`).',
    '',
  ].join('\n');
}

/** `.gitignore` of a study: the notebook and the scorer's transpiled copies stay out of git. */
export const STUDY_GITIGNORE = [
  "# kloop's lab notebook (SQLite) and working files",
  '.kloop/',
  '# transpiled copies of a TypeScript scorer, written and deleted while it loads',
  '.*.kloop.mjs',
  '.*.kloop.cjs',
  '',
].join('\n');
