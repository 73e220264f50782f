// `node --import` this file: registers module-log.hooks.mjs before the program's first import.
import { register } from 'node:module';

register('./module-log.hooks.mjs', import.meta.url);
