/**
 * The closed vocabularies of the intent task, one module for all of them.
 *
 * Every list here is shared by the corpus schema, the scorer, the LLM output
 * schema and the offline extractor. Each value carries a one-line definition;
 * labellers and prompts quote these definitions verbatim.
 */

/** A closed vocabulary: value → one-line definition. */
export type Vocabulary<T extends string> = Readonly<Record<T, string>>;

/** Kinds of business application an intent can describe. */
export const APP_TYPES = {
  booking: 'Customers reserve time slots with a provider or a bookable resource (clinics, salons, rooms, rentals).',
  marketplace: 'Independent sellers list offers and buyers transact with them through the platform.',
  ecommerce: 'One business sells its own catalogue of products online: carts, orders, shipping.',
  crm: 'A team tracks contacts, companies, leads and deals through a sales pipeline.',
  inventory: 'Stock of items is counted across locations, with receipts, transfers and reorders.',
  helpdesk: 'Requesters raise tickets or issues that support agents triage, answer and resolve.',
  project_management: 'Teams plan projects as tasks with assignees, deadlines, statuses and milestones.',
  membership: 'Members join plans or clubs, pay recurring fees, renew and use member benefits.',
  learning: 'Learners enrol in courses made of lessons and are assessed and certified.',
  field_service: 'Jobs or work orders are dispatched to technicians who visit customer sites.',
  expenses: 'Employees submit expense claims or purchase requests that managers approve and finance reimburses.',
  events: 'Organisers run events; attendees register or buy tickets; sessions, venues and check-in.',
  content_publishing: 'Authors write content that editors review, schedule and publish.',
  hr: 'People operations: employees, leave requests, shifts, recruiting and reviews.',
  other: 'None of the above describes the application well.',
} as const satisfies Vocabulary<string>;
export type AppType = keyof typeof APP_TYPES;

/** What part an entity plays in the application. */
export const ENTITY_ROLES = {
  party: 'A person, team or organisation that acts in the app (customer, therapist, vendor, employee).',
  resource: 'A thing that is offered, used, stocked or scheduled (room, product, vehicle, course, equipment).',
  transaction: 'A discrete business event that moves money, goods or stock (order, payment, sale, stock movement).',
  commitment: 'A time-bound promise between parties (booking, appointment, subscription, contract, enrolment, shift).',
  document: 'A record that is authored, submitted or reviewed (ticket, invoice, report, article, expense claim).',
  reference: 'Lookup, classification or place data that other records point to (category, location, plan, tag).',
} as const satisfies Vocabulary<string>;
export type EntityRole = keyof typeof ENTITY_ROLES;

/** Behaviours the application must support. */
export const BEHAVIORS = {
  scheduling: 'Placing things in time: slots, calendars, availability, due dates, recurring dates.',
  approval: 'Someone must approve, reject or sign off a record before it proceeds.',
  notification: 'The app sends reminders, alerts or emails/SMS/push messages to people.',
  payment: 'Money is collected, charged, invoiced, refunded or paid out.',
  inventory_tracking: 'Quantities of stock are counted, reserved, moved and reordered.',
  reporting: 'Summaries, analytics, exports or dashboards over the data.',
  messaging: 'People exchange messages or comments with each other inside the app.',
  assignment: 'Work or records are assigned, dispatched or routed to a person or team.',
  rating: 'People leave ratings, reviews or feedback scores.',
  time_tracking: 'Hours or time spent are logged against work.',
  search: 'Users search, filter or browse a catalogue of records.',
  file_attachment: 'Files, photos or documents are uploaded and attached to records.',
} as const satisfies Vocabulary<string>;
export type Behavior = keyof typeof BEHAVIORS;

/** Views and workflows the application exposes. */
export const PROJECTIONS = {
  list: 'A table or list of records with sorting and filtering.',
  detail: 'A page showing one record and its related records.',
  form: 'A form to create or edit a record.',
  calendar: 'Records placed on a day/week/month calendar.',
  kanban: 'Cards moved across status columns on a board.',
  dashboard: 'Summary tiles and charts over many records.',
  map: 'Records placed on a geographic map.',
  timeline: 'Records ordered along a time axis (history, Gantt, activity feed).',
  gallery: 'Records shown as image cards (catalogue, portfolio).',
} as const satisfies Vocabulary<string>;
export type Projection = keyof typeof PROJECTIONS;

/** Cardinality of a relation read from `from` to `to`: one_to_many = one `from` has many `to`. */
export const CARDINALITIES = {
  one_to_one: 'Each `from` has at most one `to` and vice versa.',
  one_to_many: 'One `from` has many `to`; each `to` belongs to one `from`.',
  many_to_one: 'Many `from` point to one `to`.',
  many_to_many: 'Many `from` relate to many `to` (a join table when compiled).',
} as const satisfies Vocabulary<string>;
export type Cardinality = keyof typeof CARDINALITIES;

/** Kind of a relation. */
export const RELATION_KINDS = {
  association: 'The two records refer to each other but live independently.',
  composition: '`to` is part of `from` and does not exist without it (order → order line).',
  is_a: '`from` is a specialisation of `to` (therapist is a staff member).',
} as const satisfies Vocabulary<string>;
export type RelationKind = keyof typeof RELATION_KINDS;

/** The values of a vocabulary as a non-empty tuple, for schema enums. */
export function vocabularyValues<T extends string>(vocabulary: Vocabulary<T>): [T, ...T[]] {
  return Object.keys(vocabulary) as [T, ...T[]];
}
