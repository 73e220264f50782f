import type { Bool, Id, NullableTimestamp, Timestamp } from '../../db/columns.js';

export type CheeseStatus = 'available' | 'pending' | 'sold';

export interface CategoryTable {
  id: Id;
  name: string;
  /** foldCase(name), unique. */
  name_key: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TagTable {
  id: Id;
  name: string;
  created_at: Timestamp;
}

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

export interface CheeseTagTable {
  cheese_id: number;
  tag_id: number;
}

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
  deleted_at: NullableTimestamp;
}
