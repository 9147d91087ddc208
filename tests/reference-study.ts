/**
 * The reference study run once per test run, shared by the tests that only
 * need a finished copy of it (study-loop, view-cli, view-browser): a copy of
 * examples/intent with `maxExperiments: 12` and the git notebook on, run by
 * the compiled CLI (`node bin/kloop.js run <dir> --json --quiet`) as a user
 * would. Each test file gets its own copy of the finished folder (database,
 * git mirror and all), so what one changes no other sees.
 *
 * The first test file to ask builds it; the others wait for it. The
 * synchronisation is on files, not time: the builder is whoever creates the
 * `lock` folder first (mkdir is atomic), runs the study in `study/` and
 * writes `result.json` (through a rename, so it appears whole) once the run
 * has ended. The folder all this lives in is a
 * fresh temporary folder of this test run, made and removed by the
 * integration project's global set-up (tests/global-setup.ts).
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder of this test run's reference study (tests/reference-study.ts). */
    referenceStudyRoot: string;
  }
}

const ROOT = path.resolve(import.meta.dirname, '..');
/** The budget of the shared run; everything else is examples/intent. */
export const REFERENCE_MAX_EXPERIMENTS = 12;

/** How the shared run ended: its exit code and what it printed (stdout: the JSON run report, whose paths name `ranIn`). */
export interface ReferenceRun {
  /** The folder the run ran in (its copies are elsewhere). */
  ranIn: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(dir: string): Promise<Omit<ReferenceRun, 'ranIn'>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'kloop.js'), 'run', dir, '--json', '--quiet'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let finished: Promise<ReferenceRun> | undefined;

/** Runs the reference study (this process is the builder) or waits for the process that does. */
function referenceRun(root: string): Promise<ReferenceRun> {
  const study = path.join(root, 'study');
  const result = path.join(root, 'result.json');
  finished ??= (async () => {
    let builder = true;
    try {
      mkdirSync(path.join(root, 'lock'));
    } catch {
      builder = false;
    }
    if (builder) {
      // Whatever happens, the result is written: the others wait for it.
      let outcome: ReferenceRun;
      try {
        mkdirSync(study);
        cpSync(path.join(ROOT, 'examples', 'intent'), study, {
          recursive: true,
          filter: (source) => !source.includes('.kloop'),
        });
        const config = path.join(study, 'kloop.yaml');
        writeFileSync(
          config,
          `${readFileSync(config, 'utf8').replace(/maxExperiments: \d+/, `maxExperiments: ${REFERENCE_MAX_EXPERIMENTS}`)}\nnotebook:\n  git: true\n`,
        );
        outcome = { ranIn: study, ...(await run(study)) };
      } catch (error) {
        outcome = { ranIn: study, code: null, stdout: '', stderr: String(error) };
      }
      writeFileSync(`${result}.partial`, JSON.stringify(outcome));
      renameSync(`${result}.partial`, result);
      return outcome;
    }
    while (!existsSync(result)) await new Promise((resolve) => setTimeout(resolve, 50));
    return JSON.parse(readFileSync(result, 'utf8')) as ReferenceRun;
  })();
  return finished;
}

/**
 * A copy of the finished reference study in a new temporary folder (the
 * caller removes it), and how its run ended. Fails if the run failed.
 */
export async function copyReferenceStudy(prefix: string): Promise<{ dir: string; run: ReferenceRun }> {
  const root = inject('referenceStudyRoot');
  const outcome = await referenceRun(root);
  if (outcome.code !== 0) throw new Error(`the reference study's run failed (exit ${outcome.code}): ${outcome.stderr}`);
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  cpSync(path.join(root, 'study'), dir, { recursive: true });
  return { dir, run: outcome };
}

/** Removes a copy made by {@link copyReferenceStudy}. */
export function removeStudy(dir: string | undefined): void {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}
