import type { Kysely } from 'kysely';
import type { ChangeBroadcast } from '../../db/change-broadcast.js';
import type { DB } from '../../db/schema.js';
import { latePorts, type FeatureModule, type Wired } from '../../kernel/module.js';
import { BoundedWork } from '../../kernel/bounded-work.js';
import type { CursorCodec } from '../../kernel/pagination.js';
import type { Outbox } from '../outbox/outbox.module.js';
import { CatalogueChanges } from './catalogue.changes.js';
import type { CheeseDeletionPort, CheeseDirectory } from './catalogue.ports.js';
import { CheeseBulkService } from './cheese-bulk.service.js';
import { cheeseReadRoutes } from './cheese-read.routes.js';
import { CheeseReadService } from './cheese-read.service.js';
import { cheeseWriteRoutes } from './cheese-write.routes.js';
import { CheeseRepository } from './cheese.repository.js';
import { Category, Cheese, Tag } from './cheese.schema.js';
import { CheeseService } from './cheese.service.js';
import { ImageRepository } from './image.repository.js';
import { imageRoutes } from './image.routes.js';
import { ImageService } from './image.service.js';
import { FileSystemImageStorage, type ImageStorage } from './image.storage.js';
import { seasonOpeningJob } from './season-opening.job.js';
import { StockService } from './stock.service.js';
import { StockRepository } from './stock.repository.js';
import { CatalogueSeeder } from './catalogue.seeder.js';
import { TaxonomyRepository } from './taxonomy.repository.js';
import { systemClock, type Clock } from '../../kernel/clock.js';

export type { CheeseDeletionPort, CheeseDirectory, CheeseProfile } from './catalogue.ports.js';
export type { StockService, StockLine, StockSnapshot, ReservationProblem } from './stock.service.js';
export type { CatalogueChanges } from './catalogue.changes.js';
export type { CatalogueSeeder } from './catalogue.seeder.js';
export { MILKS, TEXTURES } from './cheese.model.js';

export interface CatalogueOptions {
  db: Kysely<DB>;
  outbox: Outbox;
  publicUrl: string;
  /** Signs the list's pagination cursors. */
  cursors: CursorCodec;
  lowStockThresholdKg: number;
  /** Where uploaded images are kept (DATA_DIR/images). */
  imageDir: string;
  /** Images decoded at once, and uploads allowed to wait for a turn (503 beyond). */
  imageConcurrency: number;
  imageQueue: number;
  /** Tells the other instances about catalogue changes, and them us (none: this instance only). */
  broadcast?: ChangeBroadcast;
  clock?: Clock;
}

export interface CatalogueProvides {
  /** Signals every committed catalogue write, for whoever caches catalogue reads. */
  changes: CatalogueChanges;
  seeder: CatalogueSeeder;
  cheeses: CheeseDirectory;
  /** Stock taken and given back inside another module's transaction (orders). */
  stock: StockService;
}

/** Wired once orders exist (they are built after the catalogue: they reserve its stock). */
export interface CataloguePorts {
  /** Asked before a cheese is deleted; the orders module implements it. */
  cheeseDeletion: CheeseDeletionPort;
}

export type CatalogueModule = FeatureModule<CatalogueProvides> & Wired<CataloguePorts>;

/** Cheeses, their categories, tags, images and stock (both forms of the interface). */
export function createCatalogueModule(options: CatalogueOptions): CatalogueModule {
  const { db, outbox, publicUrl } = options;
  const clock = options.clock ?? systemClock;
  const late = latePorts<CataloguePorts>('catalogue');
  const cheeseRepository = new CheeseRepository(db, clock);
  const taxonomy = new TaxonomyRepository(clock);
  const imageRepository = new ImageRepository(db, clock);
  const storage: ImageStorage = new FileSystemImageStorage(options.imageDir);
  const changes = new CatalogueChanges(db, options.broadcast);
  const reader = new CheeseReadService({ db, cheeses: cheeseRepository, taxonomy, images: imageRepository, cursors: options.cursors, publicUrl });
  const cheeses = new CheeseService({
    cheeses: cheeseRepository,
    taxonomy,
    images: imageRepository,
    storage,
    reader,
    changes,
    outbox,
    cheeseDeletion: { beforeCheeseDeleted: (trx, cheeseId, ctx) => late.ports.cheeseDeletion.beforeCheeseDeleted(trx, cheeseId, ctx) },
    publicUrl,
    lowStockGrams: Math.round(options.lowStockThresholdKg * 1000),
  });
  const bulk = new CheeseBulkService(cheeses, changes);
  const images = new ImageService({ images: imageRepository, storage, reader, changes, publicUrl });
  return {
    name: 'catalogue',
    wire: late.wire,
    routes: async (app) => {
      app.addSchema(Category);
      app.addSchema(Tag);
      app.addSchema(Cheese);
      await app.register(cheeseReadRoutes, { reader, clock });
      await app.register(cheeseWriteRoutes, { cheeses, bulk });
      await app.register(imageRoutes, { images, imageWork: new BoundedWork(options.imageConcurrency, options.imageQueue) });
    },
    jobs: [seasonOpeningJob({ db, cheeses: cheeseRepository, outbox, clock })],
    provides: {
      changes,
      seeder: new CatalogueSeeder(db, cheeseRepository, taxonomy),
      cheeses: {
        find: async (executor, idOrSlug) => {
          const record = await reader.findRecord(executor, idOrSlug);
          return record && { id: record.id, name: record.name };
        },
        idsOf: (executor, idsOrSlugs) => reader.idsOf(executor, idsOrSlugs),
        pricesOf: (executor, idsOrSlugs) => reader.pricesOf(executor, idsOrSlugs),
        orderable: (executor, minGrams, limit) => cheeseRepository.orderableIds(executor, minGrams, limit),
        profiles: (executor) => cheeseRepository.profiles(executor),
      },
      stock: new StockService({ stock: new StockRepository(clock), outbox, changes, lowStockGrams: Math.round(options.lowStockThresholdKg * 1000) }),
    },
  };
}
