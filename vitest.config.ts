import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Two projects: `unit` (the tests beside the code in src/, in-process, fast:
 * `npm run test:unit`) and `integration` (tests/: cross-concept suites, many
 * of them spawning the compiled CLI — see tests/reliability-fixture.ts; the
 * global set-up builds dist/ when it is missing or stale).
 *
 * Both print, once, whether the PostgreSQL half of the storage tests runs
 * (src/test-support/postgres-global-setup.ts; `KLOOP_REQUIRE_POSTGRES=1`
 * makes a missing server a failure).
 *
 * The test files of a worker share one module graph (`isolate: false`):
 * each file no longer imports and transforms the sources (and the helpers of
 * tests/) anew, which was most of the unit project's time (172 → 66
 * CPU-seconds) and about a fifth of the integration project's. Each test
 * file is still evaluated afresh, so its own module-level state is its own;
 * what is shared is the sources and the helpers (tests/reference-study.ts
 * keeps its one run per test run). A test that changes what a module is
 * (`vi.doMock`) undoes it when it ends (`vi.doUnmock`, `vi.resetModules`);
 * one that spies on a global or sets an environment variable restores it.
 *
 * At least two test files run at once, even on 2 cores (vitest's default is
 * one fewer than the cores): the integration files spend most of their time
 * waiting for the CLI processes they start.
 *
 * Measured on 2 cores (December 2026; CPU = user + sys of the vitest
 * process and its children): `vitest run` 291 s wall and 8.7 CPU-minutes,
 * against 317 s and 9.6 before the lighter start of the offline executor
 * (compromise's one-file bundle, WordNet searched in place) and cheaper
 * screening, measured back to back (12.5 CPU-minutes before
 * `isolate: false`); `npm test` runs the type check beside it. The machine's
 * speed varies between runs (the same CPU-bound loop took 4.8 to 8.8 s
 * within minutes), so single wall times differ by ±15%. Most of it is the work the
 * tests exist to do: studies run to the end by the compiled CLI and
 * in-process, Chromium, the command executor's one Node process per example
 * (about 45 CPU-seconds of the total). The slowest files, in CPU-seconds:
 * init and crash-resume (a reference run and eleven interrupted or killed
 * ones) 55–65 each, view-cli and lease 35–45, cli-conventions and
 * schedule 25–33. A third worker did not shorten it (vitest 274 s, and
 * `npm test` 327 s, against 276–292 s with two): the cores are already
 * busy about 90% of the time. Making the offline proposer's screening a
 * quarter cheaper (the main job 17.9 → 13.3 CPU-seconds) did not show in the
 * suite beyond that noise (back to back: 268.6 s and 8.1 CPU-minutes before,
 * 274.1 s and 8.3 after): its studies are short, and what they pay is mostly
 * start-up (compiling the CLI's modules, loading compromise, analysing the
 * goals) and the processes the tests exist to start and stop. Keeping the
 * CLI's goal analyses on disk for the run (tests/global-setup.ts) took off
 * about 1% more (back to back: 248.9 s and 7.5 CPU-minutes without, 245.4 s
 * and 7.4 with). The same suite on 7 December 2026, same kind of machine:
 * 146 s and 4.4 CPU-minutes (`npm test` 146 s, the type check beside it):
 * the host's speed, not the suite, made the difference.
 *
 * The timeouts only bound a test that hangs (no assertion waits on time): at
 * 300 s a test that is merely slow on a loaded machine (other work on the same
 * cores) is not reported as failing.
 */
export default defineConfig({
  test: {
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    isolate: false,
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          globalSetup: ['src/test-support/postgres-global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['tests/**/*.test.ts'],
          globalSetup: ['tests/global-setup.ts', 'src/test-support/postgres-global-setup.ts'],
        },
      },
    ],
  },
});
