/** The sample corpus of the intent template (src/init/templates/intent.ts): data. */

/** Four descriptions with their gold intents (every gold entity name appears in its text). */
export const RECORDS = `- id: booking-yoga-studio-01
  goal: >-
    Our yoga studio wants members to book classes online. Each class has an
    instructor and a room, and members get a reminder the day before. The
    front desk needs a calendar of the week's classes.
  expected:
    appType: booking
    entities:
      - { name: Member, role: party }
      - { name: Class, role: resource }
      - { name: Instructor, role: party }
      - { name: Room, role: resource }
    relations:
      - { from: Instructor, to: Class, cardinality: one_to_many, kind: association }
      - { from: Room, to: Class, cardinality: one_to_many, kind: association }
    behaviors: [scheduling, notification]
    projections: [calendar]
  tags: [voice:plain, domain:fitness]
  partition: optimization

- id: helpdesk-software-support-01
  goal: >-
    Customers of our software company raise support tickets by email. An agent
    picks up each ticket, replies, and closes it when the problem is solved.
    Managers want a dashboard of open tickets per agent.
  expected:
    appType: helpdesk
    entities:
      - { name: Customer, role: party }
      - { name: Ticket, role: document }
      - { name: Agent, role: party }
    relations:
      - { from: Customer, to: Ticket, cardinality: one_to_many, kind: association }
      - { from: Agent, to: Ticket, cardinality: one_to_many, kind: association }
    behaviors: [assignment, reporting]
    projections: [dashboard]
  tags: [voice:plain, domain:software]
  partition: anchor

- id: inventory-bakery-storeroom-01
  goal: >-
    We run a bakery with two shops and keep flour, sugar and butter in a
    storeroom. Staff record each delivery from our suppliers and every time an
    ingredient moves to a shop, and we want an alert when an ingredient runs low.
  expected:
    appType: inventory
    entities:
      - { name: Shop, role: reference }
      - { name: Ingredient, role: resource }
      - { name: Delivery, role: transaction }
      - { name: Supplier, role: party }
    relations:
      - { from: Supplier, to: Delivery, cardinality: one_to_many, kind: association }
      - { from: Delivery, to: Ingredient, cardinality: many_to_one, kind: association }
    behaviors: [inventory_tracking, notification]
    projections: [list]
  tags: [voice:plain, domain:food]
  partition: optimization

- id: expenses-phone-receipts-01
  goal: >-
    Employees photograph their receipts and submit expense claims from their
    phone; their manager approves or rejects each claim, and finance reimburses
    the approved ones every Friday.
  expected:
    appType: expenses
    entities:
      - { name: Employee, role: party }
      - { name: Receipt, role: document }
      - { name: ExpenseClaim, role: document, aliases: [Claim] }
      - { name: Manager, role: party }
    relations:
      - { from: Employee, to: ExpenseClaim, cardinality: one_to_many, kind: association }
      - { from: ExpenseClaim, to: Receipt, cardinality: one_to_many, kind: composition }
    behaviors: [file_attachment, approval, payment]
    projections: [form, list]
  tags: [voice:plain, domain:finance]
  partition: shadow
`;
