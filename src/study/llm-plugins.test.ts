/**
 * The LLM plugins' budget check before a run: one full proposal's estimate is
 * built from the study's own task (its output contract, the size of its
 * answers), not from the intent executor's prompt. No model is called.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { llmOutputFormat } from '../executors/llm/output-format.ts';
import { planStudy, writeStudy } from '../init/init-study.ts';
import { estimateTokens } from '../providers/prices.ts';
import { INTENT_ANSWER_TOKENS, MIN_ANSWER_TOKENS, createLlmStudyPlugins, typicalAnswerTokens } from './llm-plugins.ts';
import { loadStudyAsync } from './load-study.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('typicalAnswerTokens', () => {
  it('is twice the longest gold answer as JSON (≈ 4 characters a token), at least 16', () => {
    // {"label":"billing"} is 19 characters: 5 tokens, doubled 10, raised to the floor of 16.
    expect(typicalAnswerTokens([{ label: 'billing' }, { label: 'account' }])).toBe(MIN_ANSWER_TOKENS);
    // 104 characters: 26 tokens, doubled 52.
    const long = {
      vendor: 'Northwind Traders International Holdings',
      invoiceNumber: 'INV-2024-000981',
      total: 18230.55,
    };
    expect(JSON.stringify(long).length).toBe(104);
    expect(typicalAnswerTokens([{ label: 'x' }, long])).toBe(52);
    expect(typicalAnswerTokens([])).toBe(MIN_ANSWER_TOKENS);
  });
});

describe('checkBudget of a study whose task is not intent', () => {
  it("estimates the classification executor's messages (prompt + the task's contract) and answers of a few tokens", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kloop-budget-'));
    dirs.push(dir);
    writeStudy(dir, planStudy({ task: 'classification', executor: 'llm' }).files, { force: true });
    const plugins = createLlmStudyPlugins({
      getDatabase: () => undefined,
      env: { OPENAI_API_KEY: 'sk-test-not-a-key' },
    });
    const study = await loadStudyAsync(dir, plugins);
    const coverage = plugins.checkBudget(study);

    // What one full proposal holds (src/providers/budget.ts): every optimization and anchor example, `repeats` times,
    // each a request of the prompt, the classification contract and the ticket; the reflective proposer's call.
    const evaluated = [...study.partitions.optimization, ...study.partitions.anchor];
    const contract = llmOutputFormat(study.task).contract;
    expect(contract).toContain('billing'); // the task's labels, not the intent contract
    expect(contract).not.toContain('entities');
    const system = study.artifactText.trimEnd().length + 2 + contract.length;
    const repeats = study.gate.repeats;
    const executorInput =
      evaluated.reduce((sum, example) => sum + estimateTokens(system + example.text.length), 0) * repeats;
    const executorOutput = evaluated.length * repeats * MIN_ANSWER_TOKENS; // {"label":"shipping"}: 5 tokens, doubled, the floor of 16
    const proposerInput = estimateTokens(
      study.artifactText.length + study.instructions.length + study.constraintsText.length + 6000 + 3000 + 2500,
    );
    const proposerOutput = Math.min(
      8192,
      Math.ceil((study.candidatesPerRound * estimateTokens(study.artifactText)) / 2) + 300,
    );
    expect(coverage.estimate).toMatchObject({
      inputTokens: executorInput + proposerInput,
      outputTokens: executorOutput + proposerOutput,
      tokens: executorInput + executorOutput + proposerInput + proposerOutput,
    });
    // The intent executor's 500-token answers would have counted 484 output tokens more per execution.
    expect(coverage.estimate.outputTokens).toBeLessThan(evaluated.length * repeats * INTENT_ANSWER_TOKENS);

    // A longer contract (more labels) is a longer request, by exactly its characters in every one.
    const config = readFileSync(path.join(dir, 'kloop.yaml'), 'utf8');
    writeFileSync(
      path.join(dir, 'kloop.yaml'),
      config.replace(
        'labels: [billing, technical, account, shipping]',
        'labels: [billing, technical, account, shipping, returns-and-exchanges, security-and-privacy]',
      ),
    );
    const wider = await loadStudyAsync(dir, plugins);
    const widerContract = llmOutputFormat(wider.task).contract;
    expect(widerContract.length).toBeGreaterThan(contract.length);
    const widerSystem = wider.artifactText.trimEnd().length + 2 + widerContract.length;
    const widerInput =
      evaluated.reduce((sum, example) => sum + estimateTokens(widerSystem + example.text.length), 0) * repeats;
    expect(plugins.checkBudget(wider).estimate.inputTokens).toBe(widerInput + proposerInput);
  });
});
