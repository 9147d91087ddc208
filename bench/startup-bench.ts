/**
 * Start-up benchmark (`npm run bench:startup`, which builds dist/ first):
 * the wall time of `kloop --help`, `kloop status examples/intent` and `kloop
 * history examples/intent`, each as a ratio to `node -e 0` measured in the
 * same run, interleaved (one of each per round), so a loaded machine slows
 * the baseline as much as the commands.
 *
 * The study is a copy of examples/intent with a small notebook (one run of 6
 * experiments, made first), so `history` and `status` read a real database.
 * The CLI is the compiled one (`node bin/kloop.js`), as `npx kloop` runs it.
 *
 * Targets (issue 13): --help ≤ 5×, status and history ≤ 8×. Prints the
 * median and the fastest time of each, and the ratios of the medians.
 * Options: `--rounds N` (default 21).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const KLOOP = path.join(ROOT, 'bin/kloop.js');
const roundsArgument = process.argv.indexOf('--rounds');
const ROUNDS = roundsArgument === -1 ? 21 : Number(process.argv[roundsArgument + 1]);

if (!existsSync(path.join(ROOT, 'dist/cli/bin.js'))) {
  process.stderr.write('bench:startup: dist/ is missing: run `npm run build` first\n');
  process.exit(1);
}

const work = mkdtempSync(path.join(tmpdir(), 'kloop-startup-'));
const study = path.join(work, 'intent');
cpSync(path.join(ROOT, 'examples/intent'), study, {
  recursive: true,
  filter: (source) => !source.includes(`${path.sep}.kloop`),
});
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

function run(args: string[]): { ms: number; status: number | null; stderr: string } {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, status: result.status, stderr: result.stderr };
}

const notebook = run([KLOOP, 'run', study, '--max-experiments', '6', '--quiet', '--json']);
if (notebook.status !== 0) {
  process.stderr.write(`bench:startup: the notebook run failed (exit ${notebook.status}): ${notebook.stderr}\n`);
  process.exit(1);
}

const COMMANDS: Array<{ label: string; args: string[]; target?: number }> = [
  { label: 'node -e 0', args: ['-e', '0'] },
  { label: 'kloop --help', args: [KLOOP, '--help'], target: 5 },
  { label: 'kloop status examples/intent', args: [KLOOP, 'status', study], target: 8 },
  { label: 'kloop history examples/intent', args: [KLOOP, 'history', study], target: 8 },
];

// One warm-up round (file system caches), not counted.
for (const command of COMMANDS) run(command.args);
const times = COMMANDS.map(() => [] as number[]);
for (let round = 0; round < ROUNDS; round += 1) {
  COMMANDS.forEach((command, index) => {
    const result = run(command.args);
    if (result.status !== 0) {
      process.stderr.write(`bench:startup: ${command.label} exited ${result.status}: ${result.stderr}\n`);
      process.exit(1);
    }
    times[index]!.push(result.ms);
  });
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const baseline = median(times[0]!);
console.log(
  `kloop start-up, ${ROUNDS} interleaved rounds, Node ${process.version}, load average ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
console.log('');
console.log(
  `${'command'.padEnd(32)}${'median ms'.padStart(10)}${'fastest ms'.padStart(12)}${'ratio'.padStart(9)}  target`,
);
let missed = 0;
COMMANDS.forEach((command, index) => {
  const value = median(times[index]!);
  const ratio = value / baseline;
  const verdict =
    command.target === undefined ? '' : `≤ ${command.target}×  ${ratio <= command.target ? 'met' : 'MISSED'}`;
  if (command.target !== undefined && ratio > command.target) missed += 1;
  console.log(
    `${command.label.padEnd(32)}${value.toFixed(0).padStart(10)}${Math.min(...times[index]!)
      .toFixed(0)
      .padStart(12)}${`${ratio.toFixed(1)}×`.padStart(9)}  ${verdict}`,
  );
});
console.log('');
console.log('ratio = median wall time / median wall time of `node -e 0` in the same run.');
process.exitCode = missed === 0 ? 0 : 1;
