import { tableColumns } from '../../db/table-columns.js';
import type { Bool, Id, Timestamp } from '../../db/columns.js';

export type CheeseStatus = 'available' | 'pending' | 'sold';

export interface CategoryTable {
  id: Id;
  name: string;
  /** foldCase(name), unique. */
  name_key: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export const CATEGORY_COLUMNS = tableColumns<CategoryTable>()({
  id: 'not null',
  name: 'not null',
  name_key: 'not null',
  created_at: 'not null',
  updated_at: 'not null',
});

export interface TagTable {
  id: Id;
  name: string;
  created_at: Timestamp;
}
export const TAG_COLUMNS = tableColumns<TagTable>()({
  id: 'not null',
  name: 'not null',
  created_at: 'not null',
});

export interface CheeseTable {
  id: Id;
  slug: string;
  name: string;
  /** foldCase(name); unique per category. */
  name_key: string;
  /** Lower-case, unaccented, punctuation folded to spaces: the name sort key. */
  sort_name: string;
  /** sort_name plus origin, region and producer, for `q`. */
  search_text: string;
  category_id: number | null;
  status: CheeseStatus;
  origin: string | null;
  /** foldCase(origin), for the country filter. */
  origin_key: string | null;
  region: string | null;
  producer: string | null;
  milk: string | null;
  pasteurized: Bool | null;
  texture: string | null;
  rind: string | null;
  aged_weeks: number | null;
  tasting_notes: string | null;
  stinkiness_rating: number | null;
  serving_temp_min: number | null;
  serving_temp_max: number | null;
  /** JSON array of strings. */
  pairings: string;
  seasonal: Bool;
  /** Bit n set = month n (1..12) is in the availability window. */
  available_months_mask: number;
  /** JSON {stages:[…]} or null. */
  aging_profile: string | null;
  organic: Bool;
  price_cents: number | null;
  /** Whole grams, so stock arithmetic is exact. */
  stock_grams: number;
  /** JSON array of external photo URLs given by clients. */
  photo_urls: string;
  /** `YYYY-MM` of the last window opening announced with cheese.back_in_stock. */
  season_announced: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}
export const CHEESE_COLUMNS = tableColumns<CheeseTable>()({
  id: 'not null',
  slug: 'not null',
  name: 'not null',
  name_key: 'not null',
  sort_name: 'not null',
  search_text: 'not null',
  category_id: 'nullable',
  status: 'not null',
  origin: 'nullable',
  origin_key: 'nullable',
  region: 'nullable',
  producer: 'nullable',
  milk: 'nullable',
  pasteurized: 'nullable',
  texture: 'nullable',
  rind: 'nullable',
  aged_weeks: 'nullable',
  tasting_notes: 'nullable',
  stinkiness_rating: 'nullable',
  serving_temp_min: 'nullable',
  serving_temp_max: 'nullable',
  pairings: 'not null',
  seasonal: 'not null',
  available_months_mask: 'not null',
  aging_profile: 'nullable',
  organic: 'not null',
  price_cents: 'nullable',
  stock_grams: 'not null',
  photo_urls: 'not null',
  season_announced: 'nullable',
  created_at: 'not null',
  updated_at: 'not null',
});

export interface CheeseTagTable {
  cheese_id: number;
  tag_id: number;
}
export const CHEESE_TAG_COLUMNS = tableColumns<CheeseTagTable>()({
  cheese_id: 'not null',
  tag_id: 'not null',
});

export interface CheeseImageTable {
  id: Id;
  cheese_id: number;
  storage_key: string;
  thumbnail_key: string;
  content_type: string;
  size_bytes: number;
  width: number;
  height: number;
  caption: string | null;
  is_primary: Bool;
  created_at: Timestamp;
}
export const CHEESE_IMAGE_COLUMNS = tableColumns<CheeseImageTable>()({
  id: 'not null',
  cheese_id: 'not null',
  storage_key: 'not null',
  thumbnail_key: 'not null',
  content_type: 'not null',
  size_bytes: 'not null',
  width: 'not null',
  height: 'not null',
  caption: 'nullable',
  is_primary: 'not null',
  created_at: 'not null',
});
