import { describe, expect, it } from 'vitest';
import {
  entityBaseName,
  isReservedWord,
  isValidIdentifier,
  snakeCase,
  tableNameForEntity,
  uniqueName,
} from './sql-names.ts';

describe('SQL names', () => {
  it('snake_cases fields and entity names, singularising the entity head noun', () => {
    expect(snakeCase('startsAt')).toBe('starts_at');
    expect(snakeCase('SLA Policy')).toBe('sla_policy');
    expect(entityBaseName('Purchase Orders')).toBe('purchase_order');
    expect(entityBaseName('Café-Bookings')).toBe('cafe_booking');
    expect(entityBaseName('3D Models')).toBe('t_3_d_model'); // normalizeEntityName splits "3D"
  });

  it('keeps tables off reserved words', () => {
    expect(isReservedWord('ORDER')).toBe(true);
    expect(isReservedWord('user')).toBe(true);
    expect(tableNameForEntity('Orders')).toBe('order_record');
    expect(tableNameForEntity('Group')).toBe('group_record');
    expect(tableNameForEntity('Customer')).toBe('customer');
  });

  it('checks identifiers and makes names unique', () => {
    expect(isValidIdentifier('order_line')).toBe(true);
    expect(isValidIdentifier('3d')).toBe(false);
    expect(isValidIdentifier('größe')).toBe(false);
    expect(isValidIdentifier('a'.repeat(64))).toBe(false);
    expect(uniqueName('tag', new Set(['tag', 'tag_2']))).toBe('tag_3');
  });
});
