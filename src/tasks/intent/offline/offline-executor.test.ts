import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Intent, intentSchema } from '../intent.ts';
import type { ExecutionResult } from '../../../executors/executor.ts';
import { OFFLINE_EXECUTOR_ID, createOfflineExecutor } from './offline-executor.ts';

const PLAYBOOK = `# Test playbook
appTypeCues:
  booking: [book, appointment]
  helpdesk: [ticket, {cue: support, weight: 2}]
defaultAppType: other
entityTerms:
  patient: party
  time slot: resource
  appointment: commitment
  ticket: document
entityAliases:
  visit: Appointment
stopList: [app, clinic]
roleSuffixes: {ist: party}
unknownNounPolicy: {include: true, role: resource, actorRole: party}
behaviorCues:
  scheduling: [schedule, time slot]
  notification: [remind, reminder]
  payment: [pay]
projectionCues:
  calendar: [calendar]
defaultProjections: [list]
relationCues:
  has many: {cardinality: one_to_many}
extraction: {maxEntities: 10}
`;

const CLINIC =
  'Our clinic app lets patients book visits with a physiotherapist. Each physiotherapist has many time slots, ' +
  'and patients get reminders before each visit.';
const HELPDESK = 'Customers open tickets by email; support agents answer them and customers pay invoices.';

const executor = createOfflineExecutor();
async function run(goal: string, artifact = PLAYBOOK): Promise<ExecutionResult> {
  return executor.execute({ input: goal, text: goal, artifact, repeat: 0 });
}
async function intentOf(goal: string, artifact = PLAYBOOK) {
  const result = await run(goal, artifact);
  if (!result.ok) throw new Error(result.message);
  expect(intentSchema.safeParse(result.output).success).toBe(true);
  return result.output as Intent;
}

describe('offline executor', () => {
  it('is deterministic and names itself', () => {
    expect(executor.id).toBe(OFFLINE_EXECUTOR_ID);
    expect(executor.deterministic).toBe(true);
  });

  it('extracts the exact intent of a booking goal', async () => {
    expect(await intentOf(CLINIC)).toEqual({
      appType: 'booking',
      entities: [
        { name: 'Patient', role: 'party' },
        { name: 'Appointment', role: 'commitment' }, // alias "visit"
        { name: 'Physiotherapist', role: 'party' }, // suffix rule "ist"
        { name: 'TimeSlot', role: 'resource' }, // multi-word term
        { name: 'Reminder', role: 'resource' }, // unknown noun policy
      ],
      relations: [{ from: 'Physiotherapist', to: 'TimeSlot', cardinality: 'one_to_many', kind: 'association' }],
      behaviors: ['scheduling', 'notification'],
      projections: ['list'],
    });
  });

  it('extracts the exact intent of a helpdesk goal', async () => {
    expect(await intentOf(HELPDESK)).toEqual({
      appType: 'helpdesk',
      entities: [
        { name: 'Customer', role: 'party' }, // person noun → actorRole
        { name: 'Ticket', role: 'document' },
        { name: 'Email', role: 'resource' },
        { name: 'Agent', role: 'party' }, // head of "support agents"
        { name: 'Invoice', role: 'resource' },
      ],
      relations: [],
      behaviors: ['payment'],
      projections: ['list'],
    });
  });

  it('matches cues on lemmas: booking, books and booked all match "book"', async () => {
    for (const goal of ['We take bookings for the gym.', 'A member books a court.', 'Courts are booked by the hour.']) {
      expect((await intentOf(goal)).appType).toBe('booking');
    }
    expect((await intentOf('We need a calendar of shifts for nurses.')).appType).toBe('other');
  });

  it('takes all of its behaviour from the playbook', async () => {
    const changed = PLAYBOOK.replace('stopList: [app, clinic]', 'stopList: [app, clinic, reminder, email]')
      .replace('visit: Appointment', 'visit: Consultation')
      .replace('defaultAppType: other', 'defaultAppType: events')
      .replace('roleSuffixes: {ist: party}', 'roleSuffixes: {ist: reference}')
      .replace('  payment: [pay]\n', '  payment: [pay]\n  messaging: [answer]\n');
    const clinic = await intentOf(CLINIC, changed);
    expect(clinic.entities).toEqual([
      { name: 'Patient', role: 'party' },
      { name: 'Consultation', role: 'resource' },
      { name: 'Physiotherapist', role: 'reference' },
      { name: 'TimeSlot', role: 'resource' },
    ]);
    const helpdesk = await intentOf(HELPDESK, changed);
    expect(helpdesk.behaviors).toEqual(['payment', 'messaging']);
    expect((await intentOf('We need a list of shifts.', changed)).appType).toBe('events');

    const strict = PLAYBOOK.replace('include: true', 'include: false');
    expect((await intentOf(CLINIC, strict)).entities.map((entity) => entity.name)).toEqual([
      'Patient',
      'Appointment',
      'TimeSlot',
    ]);
    const full = PLAYBOOK.replace('actorRole: party}', 'actorRole: party, compounds: full}');
    expect((await intentOf(HELPDESK, full)).entities.map((entity) => entity.name)).toContain('SupportAgent');
  });

  it('applies weights: the heavier type wins', async () => {
    const goal = 'Book a support session.';
    expect((await intentOf(goal)).appType).toBe('helpdesk');
    const heavier = PLAYBOOK.replace('booking: [book, appointment]', 'booking: [{cue: book, weight: 3}, appointment]');
    expect((await intentOf(goal, heavier)).appType).toBe('booking');
  });

  it('caps and dedupes entities', async () => {
    const capped = PLAYBOOK.replace('extraction: {maxEntities: 10}', 'extraction: {maxEntities: 2}');
    expect((await intentOf(CLINIC, capped)).entities).toEqual([
      { name: 'Patient', role: 'party' },
      { name: 'Appointment', role: 'commitment' },
    ]);
    // Over the cap, entities the playbook knows win over unknown nouns (Physiotherapist, Reminder).
    const three = PLAYBOOK.replace('extraction: {maxEntities: 10}', 'extraction: {maxEntities: 3}');
    expect((await intentOf(CLINIC, three)).entities.map((entity) => entity.name)).toEqual([
      'Patient',
      'Appointment',
      'TimeSlot',
    ]);
    const entities = (await intentOf('Patients see other patients, and each patient sees a doctor.')).entities;
    expect(entities).toEqual([
      { name: 'Patient', role: 'party' },
      { name: 'Doctor', role: 'party' },
    ]);
  });

  it('returns an invalid result, never throws, for a bad playbook', async () => {
    const result = await run(CLINIC, 'appTypeCues:\n  bookings: [book]\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe('error');
    expect(result.message).toContain('appTypeCues.bookings');
    const broken = await run(CLINIC, 'appTypeCues: [\n');
    expect(broken.ok).toBe(false);
  });

  it('returns an invalid result when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await executor.execute({
      input: CLINIC,
      text: CLINIC,
      artifact: PLAYBOOK,
      repeat: 0,
      signal: controller.signal,
    });
    expect(result.ok).toBe(false);
  });

  it('runs the seed playbook', async () => {
    const seed = readFileSync(new URL('../../../../examples/intent/playbook.yaml', import.meta.url), 'utf8');
    const intent = await intentOf(
      'A physio clinic wants patients to book sessions with therapists, get reminders and pay invoices; the front desk approves late cancellations.',
      seed,
    );
    expect(intent.appType).toBe('booking');
    expect(intent.behaviors).toEqual(expect.arrayContaining(['scheduling', 'approval', 'notification', 'payment']));
    expect(intent.entities.map((entity) => entity.name)).toEqual(
      expect.arrayContaining(['Patient', 'Therapist', 'Invoice']),
    );
  });
});
