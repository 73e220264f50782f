import pkg from '../package.json' with { type: 'json' };

/** The API version: the path carries /v2, this is the release (2.x.y). */
export const API_VERSION: string = pkg.version;
