import { toBool, toIso } from '../../db/columns.js';
import type { CheeseRecord } from './cheese.repository.js';
import { maskToMonths, weeksToMonths, type Milk, type Texture } from './cheese.model.js';
import type { CheeseView } from './cheese.schema.js';

export interface CheeseExtras {
  tags: { id: number; name: string }[];
  imageIds: number[];
}

export function imageUrl(publicUrl: string, cheeseId: number, imageId: number): string {
  return `${publicUrl}/v2/cheeses/${cheeseId}/images/${imageId}`;
}

export function isOwnImageUrl(publicUrl: string, url: string): boolean {
  return url.startsWith(`${publicUrl}/v2/cheeses/`) && url.includes('/images/');
}

export function toView(record: CheeseRecord, extras: CheeseExtras, publicUrl: string): CheeseView {
  const stockGrams = Number(record.stock_grams);
  return {
    id: record.id,
    slug: record.slug,
    name: record.name,
    category: record.category_id !== null && record.category_name !== null ? { id: record.category_id, name: record.category_name } : null,
    photoUrls: [...extras.imageIds.map((imageId) => imageUrl(publicUrl, record.id, imageId)), ...(JSON.parse(record.photo_urls) as string[])],
    tags: extras.tags,
    status: record.status,
    origin: record.origin,
    region: record.region,
    producer: record.producer,
    milk: record.milk as Milk | null,
    pasteurized: record.pasteurized === null ? null : toBool(record.pasteurized),
    texture: record.texture as Texture | null,
    rind: record.rind,
    agedWeeks: record.aged_weeks,
    ageMonths: weeksToMonths(record.aged_weeks),
    tastingNotes: record.tasting_notes,
    stinkinessRating: record.stinkiness_rating,
    servingTempCelsius:
      record.serving_temp_min !== null && record.serving_temp_max !== null ? { min: record.serving_temp_min, max: record.serving_temp_max } : null,
    pairings: JSON.parse(record.pairings) as string[],
    seasonal: toBool(record.seasonal),
    availableMonths: maskToMonths(record.available_months_mask),
    agingProfile: record.aging_profile === null ? null : (JSON.parse(record.aging_profile) as CheeseView['agingProfile']),
    organic: toBool(record.organic),
    pricePerKg: record.price_cents === null ? null : Number(record.price_cents) / 100,
    inStock: stockGrams > 0,
    stockQuantityKg: stockGrams / 1000,
    createdAt: toIso(record.created_at),
    updatedAt: toIso(record.updated_at),
  };
}
