import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { InputError } from '../errors.ts';
import { parseLocatedYaml, parseWithSchema } from './yaml-locations.ts';

const schema = z.strictObject({ name: z.string(), rules: z.array(z.string()) });

function problem(text: string): InputError {
  try {
    parseWithSchema(schema, parseLocatedYaml(text, { file: 'rules.yaml' }), { file: 'rules.yaml' });
  } catch (error) {
    return error as InputError;
  }
  throw new Error('expected an InputError');
}

describe('parseWithSchema', () => {
  it('tells a wrong type from a missing key', () => {
    const wrongType = problem('name: a\nrules: 3\n');
    expect(wrongType.line).toBe(2);
    expect(wrongType.field).toBe('rules');
    expect(wrongType.message).toContain('expected array, received number');
    expect(wrongType.message).not.toContain('required');
    const missing = problem('name: a\n');
    expect(missing.field).toBe('rules');
    expect(missing.message).toContain('required (expected array)');
  });
});
