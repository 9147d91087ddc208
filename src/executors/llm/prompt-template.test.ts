import { describe, expect, it } from 'vitest';
import { fillPromptTemplate, readPromptTemplate } from './prompt-template.ts';

const TICKET = { subject: 'Refund', body: 'I was charged twice', priority: 2, tags: ['vip'] };
const TICKET_TEXT = 'subject: Refund\nbody: I was charged twice';

describe('readPromptTemplate', () => {
  it('finds {{input}}, {{input.<field>}} and {{<field>}}, with spaces, offsets and lines', () => {
    expect(readPromptTemplate('Route:\n{{ subject }} / {{input.body}}\n\n{{input}}')).toEqual({
      ok: true,
      placeholders: [
        { source: '{{ subject }}', field: 'subject', offset: 7, line: 2 },
        { source: '{{input.body}}', field: 'body', offset: 23, line: 2 },
        { source: '{{input}}', offset: 39, line: 4 },
      ],
    });
    expect(readPromptTemplate('No placeholder, { braces } and {"json": {"nested": 1}}')).toEqual({
      ok: true,
      placeholders: [],
    });
  });

  it('refuses anything else between double braces, naming it and its line', () => {
    expect(readPromptTemplate('a\nb {{#if vip}} c')).toEqual({
      ok: false,
      message:
        'line 2: "{{#if vip}}" is not a placeholder: write {{input}} (the input\'s text), {{input.<field>}} or {{<field>}} (a field of an object input)',
      line: 2,
      placeholder: '{{#if vip}}',
    });
    for (const bad of ['{{input.a.b}}', '{{}}', '{{ 2nd }}', '{{input.}}', '{{a b}}'])
      expect(readPromptTemplate(bad).ok, bad).toBe(false);
  });
});

describe('fillPromptTemplate', () => {
  it('leaves a template without placeholders unchanged', () => {
    expect(fillPromptTemplate('## Task\nRoute the ticket.\n', TICKET, TICKET_TEXT)).toEqual({
      ok: true,
      text: '## Task\nRoute the ticket.\n',
      placeholders: 0,
    });
  });

  it('fills the text, text fields as they are and other values as stable JSON, in one pass', () => {
    const filled = fillPromptTemplate(
      'S={{subject}} B={{ input.body }} P={{priority}} T={{tags}}\n---\n{{input}}',
      TICKET,
      TICKET_TEXT,
    );
    expect(filled).toEqual({
      ok: true,
      text: `S=Refund B=I was charged twice P=2 T=["vip"]\n---\n${TICKET_TEXT}`,
      placeholders: 5,
    });
    // A value that looks like a placeholder is inserted as text, not read again.
    expect(fillPromptTemplate('{{a}}', { a: '{{b}}', b: 'no' }, '')).toEqual({
      ok: true,
      text: '{{b}}',
      placeholders: 1,
    });
    // {{input}} is the whole text even when the input has a field named input.
    expect(fillPromptTemplate('{{input}}|{{input.input}}', { input: 'field' }, 'input: field')).toEqual({
      ok: true,
      text: 'input: field|field',
      placeholders: 2,
    });
  });

  it('fills {{input}} for a text input, and refuses a field of a text', () => {
    expect(fillPromptTemplate('Ticket: {{input}}', 'My card was charged twice', 'My card was charged twice')).toEqual({
      ok: true,
      text: 'Ticket: My card was charged twice',
      placeholders: 1,
    });
    expect(fillPromptTemplate('x\n{{subject}}', 'My card', 'My card')).toEqual({
      ok: false,
      message:
        "line 2: the prompt names {{subject}}, but this example's input is a text, not an object with fields; write {{input}} for its text",
      line: 2,
      placeholder: '{{subject}}',
    });
  });

  it('refuses a field the input does not have, listing the fields it has', () => {
    expect(fillPromptTemplate('{{customer}}', TICKET, TICKET_TEXT)).toEqual({
      ok: false,
      message:
        'line 1: the prompt names {{customer}}, but this example\'s input has no field "customer" (its fields: body, priority, subject, tags)',
      line: 1,
      placeholder: '{{customer}}',
    });
    expect(fillPromptTemplate('{{#each}}', TICKET, TICKET_TEXT).ok).toBe(false);
  });
});
