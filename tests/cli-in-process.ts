/**
 * Runs the kloop CLI in-process for tests: exit code and what it printed
 * (stdout, stderr). The cheap way to test a command's exit code, output and
 * `--json` (no process to start, the TypeScript sources directly).
 *
 * It captures the process's own stdout and stderr, so calls must not overlap:
 * no `describe.concurrent` / `it.concurrent` around it. For what needs a real
 * process — signals, kills, pipes, running as another user, two runs at
 * once — spawn the compiled CLI through tests/reliability-fixture.ts
 * (`spawnKloop`, `runKloop`), the one shared helper for that.
 */
import { vi } from 'vitest';
import { main } from '../src/cli/main.ts';
import { setStorageOverride } from '../src/storage/location.ts';

export async function kloop(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const text = (chunk: string | Uint8Array): string =>
    typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += text(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += text(chunk);
    return true;
  });
  try {
    const code = await main(['node', 'kloop', ...args]);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = undefined;
    // A `--db` of this call is this process's storage for what it opens next (src/storage/location.ts): the test
    // files of a worker share one module graph (vitest.config.ts), so it must not outlive the call.
    setStorageOverride(undefined);
  }
}
