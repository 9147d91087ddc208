import { describe, expect, it } from 'vitest';
import type { Intent } from '../intent.ts';
import { createOfflineExecutor } from './offline-executor.ts';

const PLAYBOOK = `entityTerms:
  customer: party
stopList: [system, number]
attributeTerms: [name, date]
unknownNounPolicy: {include: true, role: resource, actorRole: party, compounds: auto}
relationCues:
  has: {kind: association}
  consist of: {kind: composition}
  belong to: {kind: composition, reverse: true}
  be a kind of: {kind: is_a}
cardinalityCues:
  one or more: many
  each: one
extraction: {maxEntities: 10, rankBy: salience, structuralAttributes: true, verbRelations: true, possessiveRelations: true}
`;

const executor = createOfflineExecutor();
async function intentOf(goal: string, artifact = PLAYBOOK) {
  const result = await executor.execute({ input: goal, text: goal, artifact, repeat: 0 });
  if (!result.ok) throw new Error(result.message);
  return result.output as Intent;
}

describe('offline extractor: entities and relations from structure', () => {
  it('keeps repeated compounds whole, tells attributes apart and reads quantified relations', async () => {
    const intent = await intentOf(
      'Each customer places one or more purchase orders. A purchase order consists of several order lines. ' +
        "The customer's name and the date of the purchase order are stored. An order line belongs to a purchase order.",
    );
    expect(intent.entities.map((entity) => entity.name)).toEqual(['Customer', 'PurchaseOrder', 'OrderLine']);
    expect(intent.relations).toEqual([
      { from: 'Customer', to: 'PurchaseOrder', cardinality: 'one_to_many', kind: 'association' },
      { from: 'PurchaseOrder', to: 'OrderLine', cardinality: 'one_to_many', kind: 'composition' },
    ]);
  });

  it('reads is_a, subjects through relative clauses and verbs coordinated with a shared subject', async () => {
    const intent = await intentOf(
      'A manager is a kind of employee. Stations have pumps that contain fuel. Sellers open a shop, create listings and ship parcels.',
    );
    expect(intent.relations).toEqual([
      { from: 'Manager', to: 'Employee', kind: 'is_a' },
      { from: 'Station', to: 'Pump', cardinality: 'one_to_many', kind: 'association' },
      { from: 'Pump', to: 'Fuel', cardinality: 'one_to_one', kind: 'association' },
      { from: 'Seller', to: 'Shop', cardinality: 'one_to_one', kind: 'association' },
      { from: 'Seller', to: 'Listing', cardinality: 'one_to_many', kind: 'association' },
      { from: 'Seller', to: 'Parcel', cardinality: 'one_to_many', kind: 'association' },
    ]);
  });

  it('fills the cap by salience, not first mention', async () => {
    const goal =
      'Our weekend market has a banner. Vendors rent stalls. Vendors pay fees for their stalls. Each stall has a roof.';
    const capped = PLAYBOOK.replace('maxEntities: 10', 'maxEntities: 2');
    expect((await intentOf(goal, capped)).entities.map((entity) => entity.name)).toEqual(['Vendor', 'Stall']);
    const byMention = capped.replace('rankBy: salience', 'rankBy: firstMention');
    expect((await intentOf(goal, byMention)).entities.map((entity) => entity.name)).toEqual(['Market', 'Banner']);
  });
});

describe('offline extractor: countable nouns, noun categories and compounds', () => {
  it('countableOnly: a noun never read as a countable thing is no entity ("on demand", "in addition")', async () => {
    const goal = 'Airplanes are built on demand. In addition, each airplane has an engine.';
    const counted = PLAYBOOK.replace('compounds: auto}', 'compounds: auto, countableOnly: true}');
    expect((await intentOf(goal)).entities.map((entity) => entity.name)).toEqual([
      'Airplane',
      'Demand',
      'Addition',
      'Engine',
    ]);
    expect((await intentOf(goal, counted)).entities.map((entity) => entity.name)).toEqual(['Airplane', 'Engine']);
  });

  it('excludeCategories: nouns whose most frequent WordNet sense is a quality or a time are no entities', async () => {
    const goal = 'Each ball has a speed. A paddle moves the ball in the future.';
    const excluding = PLAYBOOK.replace('compounds: auto}', 'compounds: auto, excludeCategories: [attribute, time]}');
    expect((await intentOf(goal)).entities.map((entity) => entity.name)).toEqual(['Ball', 'Speed', 'Paddle', 'Future']);
    expect((await intentOf(goal, excluding)).entities.map((entity) => entity.name)).toEqual(['Ball', 'Paddle']);
  });

  it('compoundRelations: a compound is a kind of its head entity and one of many of its modifier entity', async () => {
    const goal =
      'The home has sensors. Temperature sensors measure rooms. The temperature sensor is cheap. ' +
      'Each invoice is printed. The invoice lines are printed too, and every invoice line is numbered.';
    const withCompounds = PLAYBOOK.replace(
      'possessiveRelations: true}',
      'possessiveRelations: true, compoundRelations: true}',
    );
    const pairs = (intent: Intent) =>
      intent.relations.map((relation) => `${relation.from}-${relation.kind}-${relation.to}`);
    expect(pairs(await intentOf(goal))).not.toContain('TemperatureSensor-is_a-Sensor');
    expect(pairs(await intentOf(goal, withCompounds))).toEqual(
      expect.arrayContaining(['TemperatureSensor-is_a-Sensor', 'Invoice-association-InvoiceLine']),
    );
    const lines = (await intentOf(goal, withCompounds)).relations.find((relation) => relation.to === 'InvoiceLine');
    expect(lines).toEqual({ from: 'Invoice', to: 'InvoiceLine', cardinality: 'one_to_many', kind: 'association' });
  });

  it('an identifying adjective ("the same game") is never the first word of a compound', async () => {
    const goal = 'Players join a game. Two players play the same game. Later they leave the same game.';
    const adjectives = PLAYBOOK.replace('rankBy: salience,', 'rankBy: salience, adjectiveCompounds: true,');
    expect((await intentOf(goal, adjectives)).entities.map((entity) => entity.name)).toEqual(['Player', 'Game']);
  });
});

describe('offline extractor: plural nouns tagged as verbs, plural modifiers', () => {
  it('reads an -s form that WordNet knows as a noun as a plural noun where grammar rules the verb out', async () => {
    const goal =
      'Volunteers sign up for shifts. The office sends quotes and invoices to clients, and each project moves through stages.';
    const names = (await intentOf(goal)).entities.map((entity) => entity.name);
    expect(names).toEqual(expect.arrayContaining(['Volunteer', 'Quote', 'Invoice', 'Stage']));
  });

  it('keeps a plural modifier as written ("sales rep", "goods receipt")', async () => {
    const names = (await intentOf('Each sales rep records a goods receipt for every delivery.')).entities.map(
      (entity) => entity.name,
    );
    expect(names).toEqual(expect.arrayContaining(['SalesRep', 'GoodsReceipt']));
  });
});

describe('offline extractor: person nouns, term compounds, named kinds, orphans', () => {
  it('countableOnly: a person noun needs no determiner ("teacher corrects it")', async () => {
    const counted = PLAYBOOK.replace('compounds: auto}', 'compounds: auto, countableOnly: true}');
    const names = (await intentOf('Students upload homework and teacher corrects it.', counted)).entities.map(
      (entity) => entity.name,
    );
    expect(names).toContain('Teacher');
  });

  it('termCompounds: a compound whose head is a term is read at the term, whole, or whole when repeated', async () => {
    const withOrder = PLAYBOOK.replace('  customer: party\n', '  customer: party\n  order: transaction\n');
    const goal =
      'Each customer places a purchase order. The buyer approves the purchase order and every order is shipped.';
    const names = async (policy: string) =>
      (
        await intentOf(goal, withOrder.replace('verbRelations: true', `verbRelations: true, termCompounds: ${policy}`))
      ).entities.map((entity) => entity.name);
    expect(await names('head')).not.toContain('PurchaseOrder');
    expect(await names('full')).toContain('PurchaseOrder');
    expect(await names('auto')).toContain('PurchaseOrder');
    const once = 'Each customer places a purchase order, and every order is shipped.';
    expect(
      (
        await intentOf(once, withOrder.replace('verbRelations: true', 'verbRelations: true, termCompounds: auto'))
      ).entities.map((entity) => entity.name),
    ).not.toContain('PurchaseOrder');
  });

  it('a stop-listed head with a noun modifier the text repeats names a kind of record ("event type")', async () => {
    const typed = PLAYBOOK.replace('stopList: [system, number]', 'stopList: [system, number, type]');
    const names = (
      await intentOf('Each event has an event type. The organiser defines every event type.', typed)
    ).entities.map((entity) => entity.name);
    expect(names).toContain('EventType');
    const once = (await intentOf('Each event has an event type.', typed)).entities.map((entity) => entity.name);
    expect(once).not.toContain('EventType');
  });

  it('connectOrphans: an entity no reading relates joins the entity it shares most sentences with', async () => {
    const goal = 'Customers place orders. Orders, invoices.';
    const connected = PLAYBOOK.replace('verbRelations: true', 'verbRelations: true, connectOrphans: true');
    const pairs = (intent: Intent) => intent.relations.map((relation) => `${relation.from}-${relation.to}`);
    expect(pairs(await intentOf(goal))).not.toContain('Order-Invoice');
    expect(pairs(await intentOf(goal, connected))).toContain('Order-Invoice');
  });

  it('reads subtypes from the patterns of hyponymy (Hearst 1992) when extraction.subtypePatterns is on', async () => {
    const withPatterns = PLAYBOOK.replace(
      'possessiveRelations: true}',
      'possessiveRelations: true, subtypePatterns: true}',
    );
    const isA = (intent: Intent) =>
      intent.relations
        .filter((relation) => relation.kind === 'is_a')
        .map((relation) => `${relation.from}<${relation.to}`);
    expect(isA(await intentOf('The shop rents vehicles such as cars, vans and trucks.', withPatterns))).toEqual([
      'Car<Vehicle',
      'Van<Vehicle',
      'Truck<Vehicle',
    ]);
    expect(isA(await intentOf('Cars, vans and other vehicles are rented by drivers.', withPatterns))).toEqual([
      'Car<Vehicle',
      'Van<Vehicle',
    ]);
    expect(isA(await intentOf('Each room holds devices, e.g. sensors and actuators.', withPatterns))).toEqual([
      'Sensor<Device',
      'Actuator<Device',
    ]);
    expect(isA(await intentOf('The shop rents vehicles such as cars, vans and trucks.'))).toEqual([]);
  });

  it('reads a phrasal verb as one predicate ("sign up for")', async () => {
    const intent = await intentOf('Volunteers sign up for shifts.');
    expect(intent.relations).toEqual([
      { from: 'Volunteer', to: 'Shift', cardinality: 'one_to_many', kind: 'association' },
    ]);
  });

  it("resolves a pronoun subject to the previous sentence's subject when extraction.pronounSubjects is on", async () => {
    const goal = 'A member books courts. They pay a yearly fee.';
    const on = await intentOf(
      goal,
      PLAYBOOK.replace('possessiveRelations: true}', 'possessiveRelations: true, pronounSubjects: true}'),
    );
    expect(on.relations.map((relation) => `${relation.from}-${relation.to}`)).toEqual(['Member-Court', 'Member-Fee']);
    const off = await intentOf(goal);
    expect(off.relations.map((relation) => `${relation.from}-${relation.to}`)).toEqual(['Member-Court']);
  });

  it('keeps a candidate past the cap whose salience reaches extraction.overflowSalience', async () => {
    const goal =
      'Drivers drive trucks. Drivers load trucks. Drivers wash trucks. Drivers fuel trucks with diesel at depots.';
    const capped = PLAYBOOK.replace('maxEntities: 10', 'maxEntities: 1');
    expect((await intentOf(goal, capped)).entities.map((entity) => entity.name)).toHaveLength(1);
    const overflow = capped.replace('possessiveRelations: true}', 'possessiveRelations: true, overflowSalience: 6}');
    expect((await intentOf(goal, overflow)).entities.map((entity) => entity.name)).toEqual(['Driver', 'Truck']);
  });

  it('relates a noun to itself when the text relates it to "other" nouns of its kind or to "each other"', async () => {
    const pairs = (intent: Intent) => intent.relations.map((relation) => `${relation.from}-${relation.to}`);
    expect(pairs(await intentOf('Shapes can be connected to any number of other shapes.'))).toEqual(['Shape-Shape']);
    expect(pairs(await intentOf('Some airlines are related to each other.'))).toEqual(['Airline-Airline']);
    expect(pairs(await intentOf('Customers place orders.'))).toEqual(['Customer-Order']);
    // A reverse phrase too ("belongs to", the noun after it the `from` end).
    expect(pairs(await intentOf('A team belongs to other teams.'))).toEqual(['Team-Team']);
  });

  it('relates a noun to itself when its two mentions carry different modifiers ("junior employees … a senior employee")', async () => {
    const pairs = (intent: Intent) => intent.relations.map((relation) => `${relation.from}-${relation.to}`);
    expect(pairs(await intentOf('Junior engineers are assigned a senior engineer as mentor.'))).toEqual([
      'Engineer-Engineer',
    ]);
    // The same modifier, or none on one side, is not a contrast: nothing is related.
    expect(pairs(await intentOf('Senior engineers are assigned a senior engineer.'))).toEqual([]);
    expect(pairs(await intentOf('Engineers are assigned a senior engineer.'))).toEqual([]);
    // Only within one clause: not a comparison, two clauses or a change of state.
    const selfRelations = async (goal: string) =>
      pairs(await intentOf(goal)).filter((pair) => pair.split('-')[0] === pair.split('-')[1]);
    expect(await selfRelations('Domestic orders are shipped faster than international orders.')).toEqual([]);
    expect(await selfRelations('Junior engineers are hired and senior engineers are promoted.')).toEqual([]);
    expect(await selfRelations('Physical products ship, whereas digital products are downloaded.')).toEqual([]);
    expect(
      await selfRelations('Premium customers get priority support, regular customers get standard support.'),
    ).toEqual([]);
    expect(await selfRelations('Junior engineers become senior engineers.')).toEqual([]);
  });

  it("a noun related only to itself is still related to its sentence's topic", async () => {
    const withTopics = PLAYBOOK.replace(
      'possessiveRelations: true}',
      'possessiveRelations: true, sentenceRelations: true}',
    );
    const intent = await intentOf('Each club has courts. Members are linked to other members.', withTopics);
    expect(intent.relations.map((relation) => `${relation.from}-${relation.to}`)).toEqual([
      'Club-Court',
      'Member-Member',
      'Club-Member',
    ]);
  });

  it('relates the two entities a compound names: a kind when WordNet files both under one category', async () => {
    const withCompounds = PLAYBOOK.replace(
      'possessiveRelations: true}',
      'possessiveRelations: true, compoundRelations: true}',
    );
    const intent = await intentOf(
      'Each room holds sensor devices. Sensor devices are cheap. A sensor measures heat. A device has a battery.',
      withCompounds,
    );
    expect(intent.relations).toContainEqual({ from: 'Sensor', to: 'Device', kind: 'is_a' });
  });

  it("relates the topic of a sentence that relates nothing else to the previous sentence's topic", async () => {
    const withTopics = PLAYBOOK.replace(
      'possessiveRelations: true}',
      'possessiveRelations: true, sentenceRelations: true}',
    );
    const intent = await intentOf('Drivers deliver parcels. Vans are leased yearly.', withTopics);
    expect(intent.relations.map((relation) => `${relation.from}-${relation.to}`)).toEqual([
      'Driver-Parcel',
      'Driver-Van',
    ]);
  });
});
