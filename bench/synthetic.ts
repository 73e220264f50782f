import type SQLite from 'better-sqlite3';
import { MILKS, TEXTURES, foldCase, monthsToMask, normalizeText, slugify } from '../src/modules/catalogue/cheese.model.js';
import { seededRandom } from '../test/helpers/seeded-random.js';

/**
 * Synthetic catalogue rows for the deep-pagination benchmark, written straight into the
 * SQLite file before the service starts (the API would take hours for a million rows).
 * Names are distinct cheese-like names built from four lists; the order in which they are
 * inserted is a permutation of that name space, so `sort_name` order and `id` order are
 * unrelated, as in a catalogue that grew over years.
 */

const STYLES = [
  'Tomme', 'Bleu', 'Brique', 'Crottin', 'Pavé', 'Fourme', 'Pecorino', 'Caciotta', 'Queso', 'Bergkäse', 'Alpkäse', 'Gouda',
  'Cheddar', 'Raclette', 'Vacherin', 'Chèvre', 'Brebis', 'Havarti', 'Robiola', 'Tome', 'Trappiste', 'Abbaye', 'Caerphilly',
  'Kashkaval', 'Graviera', 'Formaggella', 'Toma', 'Bûche', 'Palet', 'Carré', 'Cabécou', 'Galet', 'Mimolette', 'Saint-Félicien',
  'Rigotte', 'Pélardon', 'Valençay', 'Tête', 'Mothais', 'Persillé',
];

const PLACES = [
  'Aravis', 'Beaufortain', 'Bauges', 'Chartreuse', 'Vercors', 'Queyras', 'Ubaye', 'Aubrac', 'Cantal', 'Livradois', 'Morvan',
  'Bresse', 'Dombes', 'Jura', 'Doubs', 'Vosges', 'Ardennes', 'Thiérache', 'Boulonnais', 'Pays d’Auge', 'Bessin', 'Perche',
  'Sologne', 'Berry', 'Touraine', 'Poitou', 'Charentes', 'Périgord', 'Quercy', 'Rouergue', 'Larzac', 'Cévennes', 'Ardèche',
  'Drôme', 'Diois', 'Luberon', 'Ventoux', 'Corbières', 'Cerdagne', 'Béarn', 'Soule', 'Bigorre', 'Couserans', 'Lauragais',
  'Ossau', 'Iraty', 'Basilicata', 'Sila', 'Aspromonte', 'Irpinia', 'Cilento', 'Molise', 'Abruzzo', 'Maremma', 'Casentino',
  'Garfagnana', 'Langhe', 'Roero', 'Valsesia', 'Ossola', 'Valtellina', 'Carnia', 'Cansiglio', 'Asiago', 'Lessinia',
  'Montafon', 'Bregenzerwald', 'Allgäu', 'Emmental', 'Gruyère', 'Appenzell', 'Toggenburg', 'Entlebuch', 'Engadin', 'Goms',
  'Leventina', 'Somerset', 'Dorset', 'Cotswolds', 'Dales', 'Cumbria', 'Lancashire', 'Cheshire', 'Wensleydale', 'Orkney',
  'Kerry', 'Cork', 'Connemara', 'La Mancha', 'Cabrales', 'Liébana', 'Idiazabal', 'Zamora', 'Serena', 'Estrela', 'Azeitão',
  'Thessaly', 'Epirus', 'Crete', 'Naxos',
];

const QUALIFIERS = [
  'Fermier', 'Affiné', 'Réserve', 'Vieux', 'Extra', 'Doux', 'Fort', 'au Lait Cru', 'Cendré', 'à la Truffe', 'aux Herbes',
  'Fumé', 'de Montagne', 'd’Alpage', 'Tradition', 'Sélection', 'Grand Cru', 'Noir', 'Blanc', 'Rouge', 'd’Or', 'Classique',
  'Jeune', 'Mi-Vieux', 'Surchoix',
];

const ORIGINS: [string, string][] = [
  ['France', 'Savoie'], ['France', 'Auvergne'], ['France', 'Normandy'], ['France', 'Loire Valley'], ['France', 'Jura'],
  ['Italy', 'Piedmont'], ['Italy', 'Tuscany'], ['Italy', 'Sardinia'], ['Spain', 'Asturias'], ['Spain', 'Castilla-La Mancha'],
  ['Switzerland', 'Bern'], ['Austria', 'Vorarlberg'], ['United Kingdom', 'Somerset'], ['Ireland', 'Cork'], ['Greece', 'Crete'],
  ['Portugal', 'Serra da Estrela'], ['Netherlands', 'North Holland'], ['Germany', 'Bavaria'], ['Denmark', 'Jutland'], ['Belgium', 'Wallonia'],
];
const PRODUCERS = ['Fromagerie Martin', 'Laiterie Girard', 'Caseificio Rossi', 'Quesería Ruiz', 'Käserei Huber', 'Bergerie du Col', 'GAEC des Sources', 'Dairy Hollow Farm', null];
const RINDS = ['natural', 'washed', 'bloomy', 'waxed', 'none'];
const NOTES = [
  'Supple, buttery paste with hazelnut notes and a long, savoury finish.',
  'Dense and crumbly, with a bright lactic tang that mellows into caramel.',
  'A fudgy paste under a sticky orange rind; meaty and pungent, sweeter near the centre.',
  'Clean, milky and lightly salted, with a hint of fresh grass.',
  'Firm and crystalline, brothy and nutty with a touch of pineapple.',
  'Creamy blue veining, peppery at first, then earthy and mineral.',
];
const PAIRINGS = ['crusty bread', 'walnuts', 'dried figs', 'honey', 'pear', 'Riesling', 'Pinot Noir', 'cider', 'quince paste', 'oat crackers'];


function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

export interface InsertResult {
  inserted: number;
  seconds: number;
}

/** Inserts `count` synthetic cheeses (and about two tags each) in one transaction. */
export function insertSyntheticCheeses(db: SQLite.Database, count: number): InsertResult {
  const started = performance.now();
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144'); // 256 MiB
  db.pragma('foreign_keys = ON');

  const categoryIds = (db.prepare('select id from categories order by id').all() as { id: number }[]).map((r) => r.id);
  const tagIds = (db.prepare('select id from tags order by id').all() as { id: number }[]).map((r) => r.id);
  const takenNames = new Set((db.prepare('select name from cheeses').all() as { name: string }[]).map((r) => foldCase(r.name)));
  const takenSlugs = new Set((db.prepare('select slug from cheeses').all() as { slug: string }[]).map((r) => r.slug));

  const base = STYLES.length * PLACES.length * QUALIFIERS.length;
  const lots = Math.ceil((count + takenNames.size) / base);
  const space = base * lots;
  let step = 1_000_003; // a stride coprime with the name space visits every name once, scattered
  while (gcd(step, space) !== 1) step += 2;
  const rand = seededRandom(20_260_101);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const epoch = Date.parse('2024-01-01T00:00:00Z');
  const span = 2 * 365 * 86_400_000;

  /** The i-th synthetic row, or undefined when its name is already in the catalogue. */
  const row = (i: number): Record<string, string | number | null> | undefined => {
    let k = (i * step) % space;
    const style = STYLES[k % STYLES.length]!;
    k = Math.floor(k / STYLES.length);
    const place = PLACES[k % PLACES.length]!;
    k = Math.floor(k / PLACES.length);
    const qualifier = QUALIFIERS[k % QUALIFIERS.length]!;
    const lot = Math.floor(k / QUALIFIERS.length);
    const name = `${style} ${/^[AEIOUÉ]/.test(place) ? 'd’' : 'de '}${place} ${qualifier}${lot > 0 ? ` Lot ${lot + 1}` : ''}`;
    if (takenNames.has(foldCase(name))) return undefined;
    let slug = slugify(name);
    if (takenSlugs.has(slug)) slug = `${slug}-${i}`;
    takenSlugs.add(slug);

    const [origin, region] = pick(ORIGINS);
    const producer = pick(PRODUCERS);
    const seasonal = rand() < 0.2;
    const months = seasonal ? [3, 4, 5, 6, 7, 8, 9].filter(() => rand() < 0.6) : [];
    const created = new Date(epoch + Math.floor(rand() * span));
    const statusRoll = rand();
    const tempMin = 10 + Math.floor(rand() * 6);
    const pairings = [pick(PAIRINGS), pick(PAIRINGS)];
    // The same derived columns as CheeseRepository writes (name_key, sort_name, search_text, origin_key).
    return {
      slug,
      name,
      name_key: foldCase(name),
      sort_name: normalizeText(name),
      search_text: normalizeText([name, origin, region, producer].filter(Boolean).join(' ')),
      category_id: pick(categoryIds) ?? null,
      status: statusRoll < 0.9 ? 'available' : statusRoll < 0.97 ? 'pending' : 'sold',
      origin,
      origin_key: foldCase(origin),
      region,
      producer,
      milk: pick(MILKS),
      pasteurized: rand() < 0.5 ? 1 : 0,
      texture: pick(TEXTURES),
      rind: pick(RINDS),
      aged_weeks: rand() < 0.05 ? null : Math.floor(rand() * 150),
      tasting_notes: pick(NOTES),
      stinkiness_rating: 1 + Math.floor(rand() * 5),
      serving_temp_min: tempMin,
      serving_temp_max: tempMin + 4,
      pairings: JSON.stringify(pairings[0] === pairings[1] ? pairings.slice(1) : pairings),
      seasonal: seasonal ? 1 : 0,
      available_months_mask: monthsToMask(months),
      aging_profile: null,
      organic: rand() < 0.3 ? 1 : 0,
      price_cents: 1500 + Math.floor(rand() * 7500),
      stock_grams: rand() < 0.1 ? 0 : Math.floor(rand() * 50_000),
      photo_urls: '[]',
      created_at: created.toISOString(),
      updated_at: new Date(created.getTime() + Math.floor(rand() * 30 * 86_400_000)).toISOString(),
    };
  };

  // Fail with a clear message, not a constraint error halfway, when the schema has moved on.
  // (The probe row is thrown away; it registered its slug, so the slug set is rebuilt below.)
  const columns = Object.keys(row(space - 1) ?? row(0)!);
  const required = (db.pragma('table_info(cheeses)') as { name: string; notnull: number; dflt_value: unknown; pk: number }[])
    .filter((c) => c.notnull && c.dflt_value === null && !c.pk)
    .map((c) => c.name);
  const missing = required.filter((c) => !columns.includes(c));
  if (missing.length) throw new Error(`bench/synthetic.ts does not fill the NOT NULL column(s) ${missing.join(', ')} of cheeses; update it.`);
  takenSlugs.clear();
  for (const r of db.prepare('select slug from cheeses').all() as { slug: string }[]) takenSlugs.add(r.slug);

  const insertCheese = db.prepare(`insert into cheeses (${columns.join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')})`);
  const insertTag = db.prepare('insert or ignore into cheese_tags (cheese_id, tag_id) values (?, ?)');

  // Secondary indexes are dropped for the load and rebuilt from their own stored DDL after
  // it: building an index from sorted data is far faster than a million random inserts.
  const indexes = db
    .prepare("select name, sql from sqlite_master where type = 'index' and tbl_name in ('cheeses', 'cheese_tags') and sql is not null")
    .all() as { name: string; sql: string }[];

  let inserted = 0;
  db.transaction(() => {
    for (const index of indexes) db.exec(`drop index "${index.name}"`);
    for (let i = 0; inserted < count; i++) {
      if (i >= space) throw new Error('synthetic name space exhausted');
      const values = row(i);
      if (!values) continue;
      const id = Number(insertCheese.run(values).lastInsertRowid);
      if (tagIds.length) {
        insertTag.run(id, pick(tagIds));
        insertTag.run(id, pick(tagIds));
      }
      inserted++;
    }
    for (const index of indexes) db.exec(index.sql);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  return { inserted, seconds: (performance.now() - started) / 1000 };
}
