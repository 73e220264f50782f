import type { CheeseProfile } from '../catalogue/catalogue.module.js';

export interface Tastes {
  milkAllergies: readonly string[];
  favouriteMilks: readonly string[];
  favouriteTextures: readonly string[];
  favouriteCountries: readonly string[];
  maxStinkiness: number | null;
  organicOnly: boolean;
}

export interface Recommendation {
  cheese: CheeseProfile;
  score: number;
  reasons: string[];
}

const fold = (text: string | null) => (text ?? '').trim().toLowerCase();

/** The most frequent values among the cheeses bought, at most three. */
function mostBought(bought: readonly CheeseProfile[], pick: (c: CheeseProfile) => string | null): string[] {
  const counts = new Map<string, number>();
  for (const cheese of bought) {
    const value = pick(cheese);
    if (value) counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3).map(([value]) => value);
}

/**
 * Cheeses to suggest, best first. Hard rules first: never a cheese of a milk the customer is
 * allergic to (nor one whose milk is unknown while they have an allergy), never smellier than
 * their limit, organic only if asked, and only what can be ordered now. Then points: stated
 * favourites (milk 3, texture 2, country 2) and what their order history shows (the milks,
 * textures and countries they buy most, 1 each); a cheese already bought counts less (-2), so
 * discoveries come first. Ties go to the name, so the answer is stable.
 */
export function recommend(catalogue: readonly CheeseProfile[], tastes: Tastes, boughtIds: ReadonlySet<number>, limit: number): Recommendation[] {
  const allergies = new Set(tastes.milkAllergies.map(fold));
  const bought = catalogue.filter((cheese) => boughtIds.has(cheese.id));
  const historyMilks = mostBought(bought, (c) => c.milk);
  const historyTextures = mostBought(bought, (c) => c.texture);
  const historyCountries = mostBought(bought, (c) => c.origin);
  const favourites = {
    milks: new Set(tastes.favouriteMilks.map(fold)),
    textures: new Set(tastes.favouriteTextures.map(fold)),
    countries: new Set(tastes.favouriteCountries.map(fold)),
  };
  const suggestions: Recommendation[] = [];
  for (const cheese of catalogue) {
    if (!cheese.orderable) continue;
    if (allergies.size > 0 && (cheese.milk === null || allergies.has(fold(cheese.milk)))) continue;
    if (tastes.maxStinkiness !== null && (cheese.stinkiness ?? 0) > tastes.maxStinkiness) continue;
    if (tastes.organicOnly && !cheese.organic) continue;
    let score = 0;
    const reasons: string[] = [];
    const award = (points: number, reason: string) => {
      score += points;
      reasons.push(reason);
    };
    if (favourites.milks.has(fold(cheese.milk))) award(3, `you like ${cheese.milk} milk`);
    if (favourites.textures.has(fold(cheese.texture))) award(2, `you like ${cheese.texture} cheeses`);
    if (favourites.countries.has(fold(cheese.origin))) award(2, `you like cheeses from ${cheese.origin}`);
    if (cheese.milk && historyMilks.includes(cheese.milk)) award(1, `you often order ${cheese.milk} milk cheeses`);
    if (cheese.texture && historyTextures.includes(cheese.texture)) award(1, `you often order ${cheese.texture} cheeses`);
    if (cheese.origin && historyCountries.includes(cheese.origin)) award(1, `you often order cheeses from ${cheese.origin}`);
    if (boughtIds.has(cheese.id)) {
      score -= 2;
      reasons.push('you have ordered it before');
    }
    suggestions.push({ cheese, score, reasons });
  }
  return suggestions.sort((a, b) => b.score - a.score || a.cheese.name.localeCompare(b.cheese.name)).slice(0, limit);
}
