import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { AppEntity, AssembledApp } from './assembled-app.ts';
import { buildSpec, compileApp, type SpecTable } from './compile.ts';

function entity(
  name: string,
  role: AppEntity['role'],
  fields: AppEntity['fields'] = [{ name: 'name', type: 'TEXT', required: true, unique: false }],
): AppEntity {
  return { name, role, fields, source: { patternId: null } };
}

function app(partial: Partial<AssembledApp>): AssembledApp {
  return { appType: 'other', entities: [], relations: [], behaviors: [], projections: [], ...partial };
}

function table(tables: readonly SpecTable[], name: string): SpecTable {
  const found = tables.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no table ${name}`);
  return found;
}

describe('compileApp', () => {
  it('makes snake_case tables with id, field columns and created_at', () => {
    const spec = compileApp(
      app({
        entities: [
          entity('Purchase Orders', 'transaction', [
            { name: 'orderedAt', type: 'DATETIME', required: true, unique: false },
            { name: 'status', type: 'TEXT', required: true, unique: false, values: ['draft', "it's sent"] },
          ]),
        ],
      }),
    );
    const purchaseOrder = table(spec.tables, 'purchase_order');
    expect(purchaseOrder.columns.map((column) => column.name)).toEqual(['id', 'ordered_at', 'status', 'created_at']);
    expect(purchaseOrder.timeColumn).toBe('ordered_at');
    expect(spec.sql).toContain("status TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'it''s sent'))");
    expect(buildSpec(spec)).toEqual({ ok: true, tables: 1, views: 0 });
  });

  it('renames tables that would be reserved words', () => {
    const spec = compileApp(
      app({
        entities: [entity('Order', 'transaction'), entity('Group', 'party')],
        relations: [{ from: 'Group', to: 'Order', cardinality: 'one_to_many', kind: 'association', source: 'intent' }],
      }),
    );
    expect(spec.tables.map((candidate) => candidate.name)).toEqual(['order_record', 'group_record']);
    expect(table(spec.tables, 'order_record').columns.map((column) => column.name)).toContain('group_id');
    expect(buildSpec(spec).ok).toBe(true);
  });

  it('puts one_to_many and many_to_one keys on the many side', () => {
    const spec = compileApp(
      app({
        entities: [entity('Customer', 'party'), entity('Booking', 'commitment'), entity('Room', 'resource')],
        relations: [
          { from: 'Customer', to: 'Booking', cardinality: 'one_to_many', kind: 'association', source: 'intent' },
          { from: 'Booking', to: 'Room', cardinality: 'many_to_one', kind: 'association', source: 'intent' },
        ],
      }),
    );
    expect(spec.relations.map((relation) => relation.implementation)).toEqual([
      { type: 'foreign_key', table: 'booking', column: 'customer_id' },
      { type: 'foreign_key', table: 'booking', column: 'room_id' },
    ]);
    expect(spec.sql).toContain('customer_id INTEGER REFERENCES customer(id) ON DELETE SET NULL');
    expect(buildSpec(spec).ok).toBe(true);
  });

  it('makes one_to_one a unique key, is_a a unique required key on the specialisation, composition cascading', () => {
    const spec = compileApp(
      app({
        entities: [
          entity('Employee', 'party'),
          entity('Manager', 'party'),
          entity('Badge', 'document'),
          entity('Order', 'transaction'),
          entity('Order Line', 'transaction'),
        ],
        relations: [
          { from: 'Manager', to: 'Employee', cardinality: 'one_to_one', kind: 'is_a', source: 'intent' },
          { from: 'Employee', to: 'Badge', cardinality: 'one_to_one', kind: 'association', source: 'intent' },
          { from: 'Order', to: 'Order Line', cardinality: 'one_to_many', kind: 'composition', source: 'intent' },
        ],
      }),
    );
    expect(spec.sql).toContain('employee_id INTEGER NOT NULL UNIQUE REFERENCES employee(id) ON DELETE CASCADE');
    expect(table(spec.tables, 'manager').columns.map((column) => column.name)).toContain('employee_id');
    expect(spec.sql).toContain('employee_id INTEGER UNIQUE REFERENCES employee(id) ON DELETE SET NULL');
    expect(spec.sql).toContain('order_id INTEGER NOT NULL REFERENCES order_record(id) ON DELETE CASCADE');
    expect(buildSpec(spec).ok).toBe(true);
  });

  it('turns many_to_many into a join table with two keys and a composite primary key', () => {
    const spec = compileApp(
      app({
        entities: [entity('Article', 'document'), entity('Tag', 'reference')],
        relations: [{ from: 'Article', to: 'Tag', cardinality: 'many_to_many', kind: 'association', source: 'intent' }],
      }),
    );
    const join = table(spec.tables, 'article_tag');
    expect(join.kind).toBe('join');
    expect(join.primaryKey).toEqual(['article_id', 'tag_id']);
    expect(join.columns.filter((column) => column.references).map((column) => column.references?.table)).toEqual([
      'article',
      'tag',
    ]);
    expect(spec.relations[0]?.implementation).toEqual({ type: 'join_table', table: 'article_tag' });
    expect(spec.sql).toContain('PRIMARY KEY (article_id, tag_id)');
    expect(buildSpec(spec).ok).toBe(true);

    // The join table really enforces both keys and the pair's uniqueness.
    const database = new Database(':memory:');
    try {
      database.pragma('foreign_keys = ON');
      for (const statement of spec.statements) database.exec(statement);
      database.exec("INSERT INTO article (id, name) VALUES (1, 'a'); INSERT INTO tag (id, name) VALUES (1, 't');");
      database.exec('INSERT INTO article_tag (article_id, tag_id) VALUES (1, 1)');
      expect(() => database.exec('INSERT INTO article_tag (article_id, tag_id) VALUES (1, 1)')).toThrow(
        /UNIQUE|PRIMARY/,
      );
      expect(() => database.exec('INSERT INTO article_tag (article_id, tag_id) VALUES (1, 2)')).toThrow(/FOREIGN KEY/);
    } finally {
      database.close();
    }
  });

  it('names self relations parent_<entity>_id and self many_to_many <entity>_link', () => {
    const spec = compileApp(
      app({
        entities: [entity('Employee', 'party')],
        relations: [
          { from: 'Employee', to: 'Employee', cardinality: 'one_to_many', kind: 'association', source: 'intent' },
        ],
      }),
    );
    expect(table(spec.tables, 'employee').columns.map((column) => column.name)).toContain('parent_employee_id');
    const links = compileApp(
      app({
        entities: [entity('Person', 'party')],
        relations: [
          { from: 'Person', to: 'Person', cardinality: 'many_to_many', kind: 'association', source: 'intent' },
        ],
      }),
    );
    expect(table(links.tables, 'person_link').primaryKey).toEqual(['person_id', 'related_person_id']);
    expect(buildSpec(spec).ok).toBe(true);
    expect(buildSpec(links).ok).toBe(true);
  });

  it('compiles projections to views, adding status, time and coordinate columns where needed', () => {
    const spec = compileApp(
      app({
        entities: [entity('Task', 'document'), entity('Site', 'reference'), entity('Photo', 'resource')],
        relations: [
          { from: 'Site', to: 'Task', cardinality: 'one_to_many', kind: 'association', source: 'intent' },
          { from: 'Task', to: 'Photo', cardinality: 'one_to_many', kind: 'association', source: 'intent' },
        ],
        projections: [
          { kind: 'kanban', entity: 'Task' },
          { kind: 'calendar', entity: 'Task' },
          { kind: 'list', entity: 'Task' },
          { kind: 'detail', entity: 'Task' },
          { kind: 'form', entity: 'Task' },
          { kind: 'dashboard', entity: 'Task' },
          { kind: 'timeline', entity: 'Task' },
          { kind: 'map', entity: 'Site' },
          { kind: 'gallery', entity: 'Photo' },
        ],
      }),
    );
    expect(spec.views.map((view) => view.name)).toEqual([
      'v_task_kanban',
      'v_task_calendar',
      'v_task_list',
      'v_task_detail',
      'v_task_dashboard',
      'v_task_timeline',
      'v_site_map',
      'v_photo_gallery',
    ]);
    expect(spec.projections.find((projection) => projection.kind === 'form')).toEqual({
      kind: 'form',
      entity: 'Task',
      table: 'task',
    });
    const task = table(spec.tables, 'task');
    expect(task.columns.map((column) => column.name)).toEqual(expect.arrayContaining(['status', 'starts_at']));
    expect(task.timeColumn).toBe('starts_at');
    expect(table(spec.tables, 'site').columns.map((column) => column.name)).toEqual(
      expect.arrayContaining(['latitude', 'longitude']),
    );
    expect(table(spec.tables, 'photo').columns.map((column) => column.name)).toContain('image_url');
    expect(spec.notes).toContain('added task.status for the kanban projection');
    expect(spec.sql).toContain("CASE status WHEN 'new' THEN 0");
    expect(spec.sql).toContain('p1.name AS site_label');
    expect(buildSpec(spec)).toEqual({ ok: true, tables: 3, views: 8 });
  });

  it('leaves a relation or projection naming a missing entity uncompiled and says so', () => {
    const spec = compileApp(
      app({
        entities: [entity('Customer', 'party')],
        relations: [
          { from: 'Customer', to: 'Wallet', cardinality: 'one_to_one', kind: 'association', source: 'intent' },
        ],
        projections: [{ kind: 'list', entity: 'Wallet' }],
      }),
    );
    expect(spec.relations[0]).toMatchObject({ resolved: false, fromTable: 'customer' });
    expect(spec.relations[0]?.toTable).toBeUndefined();
    expect(spec.projections).toEqual([{ kind: 'list', entity: 'Wallet' }]);
    expect(spec.notes).toHaveLength(2);
    expect(buildSpec(spec).ok).toBe(true);
  });
});

describe('buildSpec', () => {
  it('reports a SQLite error as a result, naming the statement', () => {
    const result = buildSpec({
      statements: ['CREATE TABLE a (id INTEGER PRIMARY KEY);', 'CREATE TABLE a (id INTEGER PRIMARY KEY);'],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ stage: 'statement', statementIndex: 1, code: 'SQLITE_ERROR' });
    expect(result.error.message).toMatch(/already exists/);
  });

  it('catches a foreign key to a missing table, which SQLite accepts at CREATE time', () => {
    const result = buildSpec({
      statements: ['CREATE TABLE a (id INTEGER PRIMARY KEY, b_id INTEGER REFERENCES b(id));'],
    });
    expect(result).toEqual({
      ok: false,
      error: { stage: 'foreign_keys', message: 'foreign key a.b_id references missing table b' },
    });
  });

  it('catches a view over a missing table', () => {
    const result = buildSpec({ statements: ['CREATE VIEW v AS SELECT * FROM nowhere;'] });
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.error).toMatchObject({ stage: 'views', message: expect.stringMatching(/no such table/) });
  });

  it('builds an empty specification', () => {
    expect(buildSpec({ statements: [] })).toEqual({ ok: true, tables: 0, views: 0 });
  });
});
