/**
 * A classification study with an `llm` executor on a loopback model server,
 * for the evaluation-worker tests and `npm run bench:workers`: made by
 * `kloop init --task classification --executor llm` (the compiled CLI), with
 * 50 tickets (40 optimization, 4 anchor, 6 shadow) and the model
 * `openai-compatible:sim` at `modelUrl`, its key read from the environment
 * variable `keyEnv` (each worker process gets its own key, so the server can
 * tell their calls apart).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The labels of the study's tickets, in turn. */
export const WORKER_STUDY_LABELS = ['billing', 'technical', 'account', 'shipping'];

/** The answer of the simulated model to a request body: a label from a checksum of the text (deterministic). */
export function simulatedLabel(body: string): string {
  return WORKER_STUDY_LABELS[
    [...body].reduce((sum, character) => sum + character.charCodeAt(0), 0) % WORKER_STUDY_LABELS.length
  ]!;
}

/**
 * Makes the study in a new temporary folder (the caller removes it).
 *
 * @param extraConfig lines appended to kloop.yaml (e.g. stopping settings)
 * @returns the folder
 */
export function makeLlmWorkerStudy(modelUrl: string, keyEnv: string, extraConfig: string[] = []): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'kloop-llm-workers-'));
  const init = spawn(
    process.execPath,
    [path.join(ROOT, 'bin/kloop.js'), 'init', dir, '--task', 'classification', '--executor', 'llm'],
    { stdio: 'ignore' },
  );
  return new Promise<string>((resolve, reject) => {
    init.once('close', (code) => {
      if (code !== 0) return reject(new Error(`kloop init exited ${code}`));
      for (const file of readdirSync(path.join(dir, 'corpus'))) unlinkSync(path.join(dir, 'corpus', file));
      const topics = [
        'a refund of my invoice',
        'the app crashes on start',
        'I cannot sign in',
        'my parcel is late',
        'a charge I do not know',
        'an error on the export page',
      ];
      const records = Array.from({ length: 50 }, (_, index) => ({
        id: `ticket-${String(index + 1).padStart(3, '0')}`,
        input: `Ticket ${index + 1}: ${topics[index % topics.length]} (order ${1000 + index * 7})`,
        expected: { label: WORKER_STUDY_LABELS[index % WORKER_STUDY_LABELS.length] },
        partition: index < 40 ? 'optimization' : index < 44 ? 'anchor' : 'shadow',
      }));
      writeFileSync(
        path.join(dir, 'corpus', 'bench.jsonl'),
        `${records.map((record) => JSON.stringify(record)).join('\n')}\n`,
      );
      const config = readFileSync(path.join(dir, 'kloop.yaml'), 'utf8')
        .replace(
          /model: openai:gpt-4\.1-mini[^\n]*/,
          `model: openai-compatible:sim\n  baseURL: ${modelUrl}\n  apiKeyEnv: ${keyEnv}`,
        )
        .replace(/corpus:[^\n]*\n(\s+- [^\n]*\n)+/, 'corpus:\n  - corpus/*.jsonl\n');
      writeFileSync(path.join(dir, 'kloop.yaml'), [config.trimEnd(), ...extraConfig, ''].join('\n'));
      resolve(dir);
    });
  });
}
