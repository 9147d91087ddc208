import { describe, expect, it } from 'vitest';
import { instructionReason, splitSentences, stripExerciseInstructions } from './exercise-instructions.ts';

describe('splitSentences', () => {
  it('splits at sentence ends but not after abbreviations', () => {
    expect(splitSentences('A vet treats pets, e.g. Dogs and cats. Owners pay. "Quoted" too.')).toEqual([
      'A vet treats pets, e.g. Dogs and cats. ',
      'Owners pay. ',
      '"Quoted" too.',
    ]);
  });
});

describe('instructionReason', () => {
  it.each([
    'Create a class diagram for the veterinary clinic.',
    'Draw a UML model of the system.',
    'Model the following scenario.',
    'Your task is to identify the main concepts.',
    'In this exercise you practise modelling.',
    'Use at least one role name.',
    'Ignore the visibilities.',
    'Identify the classes and their attributes.',
    'You do not need to model getters and setters.',
    'Assign the use cases to actors.',
    'The clinic gave you the following description:',
    'Add generalizations where useful.',
  ])('%s is an instruction', (sentence) => {
    expect(instructionReason(sentence)).toBeDefined();
  });

  it.each([
    'A vet clinic treats pets and bills their owners.',
    'Owners can book a visit online.',
    'Create an invoice for each visit.',
    'Each exam room has a number.',
    'Users choose the visibility of their reviews.',
    'The yoga class has a maximum of 12 participants.',
    'Managers assign roles to staff members.',
  ])('%s describes the system', (sentence) => {
    expect(instructionReason(sentence)).toBeUndefined();
  });
});

describe('stripExerciseInstructions', () => {
  it('removes headings, label lines, instruction sentences and bullets, keeps the description, reports everything', () => {
    const description = [
      '# Task 1',
      'Read the case carefully. Create a class diagram for it.',
      '',
      'Case description:',
      'A vet clinic treats pets. Owners book visits online. Your model should show the visits.',
      '',
      '- Draw the diagram with multiplicities.',
      '- Pets have a species and a birth date.',
      '',
      '## Vet clinic',
      'STEP 2',
      'Vets write a report after each visit.',
    ].join('\n');
    const result = stripExerciseInstructions(description);
    expect(result.text).toBe(
      [
        'A vet clinic treats pets. Owners book visits online.',
        '',
        '- Pets have a species and a birth date.',
        '',
        'Vet clinic',
        'Vets write a report after each visit.',
      ].join('\n'),
    );
    expect(result.stripped).toEqual([
      { line: 1, text: '# Task 1', reason: 'exercise heading' },
      { line: 2, text: 'Read the case carefully.', reason: 'instruction to the student' },
      { line: 2, text: 'Create a class diagram for it.', reason: 'mentions the diagram to produce' },
      { line: 4, text: 'Case description:', reason: 'label heading' },
      { line: 5, text: 'Your model should show the visits.', reason: 'addresses the student' },
      { line: 7, text: 'Draw the diagram with multiplicities.', reason: 'instruction to the student' },
      { line: 11, text: 'STEP 2', reason: 'exercise heading' },
    ]);
  });

  it('returns an empty text when everything is an instruction', () => {
    expect(stripExerciseInstructions('Create a UML class diagram.\nTask').text).toBe('');
  });
});
