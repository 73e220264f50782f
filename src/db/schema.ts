import type { AccountTable, ApiKeyTable } from '../modules/identity/identity.table.js';
import type {
  CategoryTable,
  CheeseImageTable,
  CheeseTable,
  CheeseTagTable,
  TagTable,
} from '../modules/catalogue/catalogue.table.js';
import type { OutboxTable } from '../modules/outbox/outbox.table.js';

export interface DB {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  categories: CategoryTable;
  tags: TagTable;
  cheeses: CheeseTable;
  cheese_tags: CheeseTagTable;
  cheese_images: CheeseImageTable;
  outbox: OutboxTable;
}
