// The metric of the ml-training study: the validation accuracy of one fold,
// as train.mjs measured it (kloop's custom task contract, src/tasks/custom/custom-task.ts).
export const outputSchema = {
  type: 'object',
  properties: {
    accuracy: { type: 'number', minimum: 0, maximum: 1 },
    correct: { type: 'integer' },
    total: { type: 'integer' },
  },
  required: ['accuracy', 'correct', 'total'],
};

export function score(output) {
  const wrong = output.total - output.correct;
  return {
    score: output.accuracy,
    feedback:
      wrong === 0
        ? 'every validation flower classified right'
        : `${wrong} of ${output.total} validation flowers misclassified`,
  };
}
