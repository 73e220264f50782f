import type { Client } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';

/** The API's paths as the OpenAPI document types them (generated). */
export type ApiPaths = paths;
/** The typed HTTP client every resource class calls through: its own file, so resources need not import the client that builds them. */
export type ApiClient = Client<ApiPaths>;
