/**
 * Reading a custom scorer module's exports (./custom-task.ts): the export
 * lookup through CommonJS and transpiled default exports, the schema and
 * components exports, and the module error (code `custom_module`).
 */
import { z } from 'zod';
import { InputError } from '../../errors.ts';
import type { TaskComponent } from '../task.ts';

/** Error code of a module that cannot be used at all. */
export const CUSTOM_MODULE_ERROR = 'custom_module';

function isZodSchema(value: unknown): value is z.ZodType {
  return (
    typeof value === 'object' &&
    value !== null &&
    '_zod' in value &&
    typeof (value as { safeParse?: unknown }).safeParse === 'function'
  );
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

export function moduleError(message: string, file: string, field?: string, cause?: unknown): InputError {
  return new InputError(message, {
    file,
    code: CUSTOM_MODULE_ERROR,
    ...(field !== undefined ? { field } : {}),
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** The export `name` of a module namespace, looking through CommonJS and transpiled default exports. */
export function exportOf(exports: Record<string, unknown>, name: string): unknown {
  if (exports[name] !== undefined) return exports[name];
  let inner = exports.default;
  for (let depth = 0; depth < 2 && inner !== null && typeof inner === 'object'; depth += 1) {
    const value = (inner as Record<string, unknown>)[name];
    if (value !== undefined) return value;
    inner = (inner as Record<string, unknown>).default;
  }
  return undefined;
}

export function schemaExport(
  value: unknown,
  name: string,
  file: string,
): { schema: z.ZodType; jsonSchema: Record<string, unknown> } {
  if (value === undefined) return { schema: z.json(), jsonSchema: {} };
  if (isZodSchema(value)) {
    const json = z.toJSONSchema(value, { unrepresentable: 'any' }) as Record<string, unknown>;
    const { $schema: _ignored, ...jsonSchema } = json;
    return { schema: value, jsonSchema };
  }
  if (isPlainObject(value)) {
    try {
      const { $schema: _ignored, ...jsonSchema } = value;
      return { schema: z.fromJSONSchema(value as never) as z.ZodType, jsonSchema };
    } catch (error) {
      throw moduleError(`${name} is not a JSON Schema kloop can read: ${(error as Error).message}`, file, name, error);
    }
  }
  throw moduleError(`${name} must be a zod 4 schema or a JSON Schema object`, file, name);
}

export function componentsExport(value: unknown, file: string): TaskComponent[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0)
    throw moduleError(
      'components must be a non-empty list of names or { name, weight?, description? }',
      file,
      'components',
    );
  const components = value.map((item: unknown, index): TaskComponent => {
    const entry = typeof item === 'string' ? { name: item } : item;
    if (!isPlainObject(entry) || typeof entry.name !== 'string' || entry.name === '') {
      throw moduleError('a component needs a non-empty name', file, `components[${index}]`);
    }
    const weight = entry.weight ?? 1;
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0)
      throw moduleError('a component weight must be a number ≥ 0', file, `components[${index}].weight`);
    const description = entry.description ?? `component ${entry.name} of the custom scorer`;
    if (typeof description !== 'string')
      throw moduleError('a component description must be text', file, `components[${index}].description`);
    return { name: entry.name, weight, description };
  });
  const names = components.map((component) => component.name);
  if (new Set(names).size !== names.length) throw moduleError('component names must be unique', file, 'components');
  if (!components.some((component) => component.weight > 0))
    throw moduleError('at least one component must weigh more than 0', file, 'components');
  return components;
}
