import type { FastifyPluginAsync } from 'fastify';
import type { AppConfig } from '../../config.js';
import type { Services } from '../../services.js';
import { cheeseReadRoutes } from './cheese-read.routes.js';
import { cheeseWriteRoutes } from './cheese-write.routes.js';
import { imageRoutes } from './image.routes.js';
import { Category, Cheese, Tag } from './cheese.schema.js';

export const catalogueRoutes: FastifyPluginAsync<{ services: Services; config: AppConfig }> = async (app, { services }) => {
  app.addSchema(Category);
  app.addSchema(Tag);
  app.addSchema(Cheese);
  await app.register(cheeseReadRoutes, { services });
  await app.register(cheeseWriteRoutes, { services });
  await app.register(imageRoutes, { services });
};
