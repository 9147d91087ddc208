import { describe, expect, it } from 'vitest';
import { ERROR_DRIVEN_PROPOSER_ID as proposerModuleId } from '../proposers/error-driven-proposer.ts';
import { OFFLINE_EXECUTOR_ID as executorModuleId } from '../tasks/intent/offline/offline-executor.ts';
import { createLazyErrorDrivenProposer, createLazyOfflineExecutor, ERROR_DRIVEN_PROPOSER_ID, OFFLINE_EXECUTOR_ID } from './load-study.ts';

describe('the offline executor and error-driven proposer, loaded on first use', () => {
  it('declare the ids their modules declare (part of the evaluator fingerprint)', () => {
    expect(OFFLINE_EXECUTOR_ID).toBe(executorModuleId);
    expect(ERROR_DRIVEN_PROPOSER_ID).toBe(proposerModuleId);
    expect(createLazyOfflineExecutor().id).toBe(executorModuleId);
    expect(createLazyErrorDrivenProposer().id).toBe(proposerModuleId);
  });

  it('execute like the offline executor once loaded', async () => {
    const executor = createLazyOfflineExecutor();
    const result = await executor.execute({ input: 'Patients book appointments with therapists.', text: 'Patients book appointments with therapists.', artifact: 'not: [a playbook', repeat: 0 });
    expect(result.ok).toBe(false);
    expect(executor.deterministic).toBe(true);
  });
});
