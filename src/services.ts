import path from 'node:path';
import type { AppConfig } from './config.js';
import type { Database } from './db/database.js';
import { PrincipalResolver } from './http/auth.js';
import { API_VERSION } from './version.js';
import { AccountRepository } from './modules/identity/account.repository.js';
import { AccountService } from './modules/identity/account.service.js';
import { ApiKeyRepository } from './modules/identity/api-key.repository.js';
import { ApiKeyService } from './modules/identity/api-key.service.js';
import { CheeseRepository } from './modules/catalogue/cheese.repository.js';
import { TaxonomyRepository } from './modules/catalogue/taxonomy.repository.js';
import { ImageRepository } from './modules/catalogue/image.repository.js';
import { FileSystemImageStorage, type ImageStorage } from './modules/catalogue/image.storage.js';
import { CheeseReadService } from './modules/catalogue/cheese-read.service.js';
import { CheeseService } from './modules/catalogue/cheese.service.js';
import { ImageService } from './modules/catalogue/image.service.js';
import { CursorCodec } from './modules/catalogue/cursor.js';
import { CatalogueSeeder } from './modules/catalogue/seed.js';
import { SeasonService } from './modules/catalogue/season.service.js';
import { CheeseBulkService } from './modules/catalogue/cheese-bulk.service.js';
import { CatalogueChanges } from './modules/catalogue/catalogue-changes.js';

export interface Services {
  accounts: AccountService;
  apiKeys: ApiKeyService;
  principals: PrincipalResolver;
  cheeseReader: CheeseReadService;
  cheeses: CheeseService;
  bulk: CheeseBulkService;
  catalogueChanges: CatalogueChanges;
  images: ImageService;
  seeder: CatalogueSeeder;
  seasons: SeasonService;
}

/** Wires repositories and services once; routes receive services, never repositories. */
export function createServices(config: AppConfig, database: Database, storage?: ImageStorage): Services {
  const { db } = database;
  const postgres = database.dialect === 'postgres';
  const events = { environment: config.env, apiVersion: API_VERSION };
  const apiKeys = new ApiKeyService(db, new ApiKeyRepository(db), config.env, postgres, config.authCacheTtlMs, events);
  const cheeseRepository = new CheeseRepository(db, postgres);
  const taxonomy = new TaxonomyRepository(db);
  const imageRepository = new ImageRepository(db);
  const imageStorage = storage ?? new FileSystemImageStorage(path.join(config.dataDir, 'images'));
  const cheeseReader = new CheeseReadService(cheeseRepository, taxonomy, imageRepository, new CursorCodec(config.appSecret), config.publicUrl);
  const catalogueChanges = new CatalogueChanges();
  const cheeses = new CheeseService(db, cheeseRepository, taxonomy, imageRepository, imageStorage, cheeseReader, catalogueChanges, {
    publicUrl: config.publicUrl,
    lowStockGrams: Math.round(config.lowStockThresholdKg * 1000),
    events,
  });
  return {
    accounts: new AccountService(new AccountRepository(db)),
    apiKeys,
    principals: new PrincipalResolver([apiKeys]),
    cheeseReader,
    cheeses,
    bulk: new CheeseBulkService(db, cheeses, catalogueChanges),
    catalogueChanges,
    images: new ImageService(db, imageRepository, imageStorage, cheeseReader, catalogueChanges, config.publicUrl),
    seeder: new CatalogueSeeder(db, cheeseRepository, taxonomy),
    seasons: new SeasonService(db, cheeseRepository, events),
  };
}
