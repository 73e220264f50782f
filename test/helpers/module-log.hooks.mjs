// Module resolution hooks (node:module register): every @opentelemetry specifier a process
// resolves is appended to MODULE_LOG_FILE, so a test can tell whether it loaded any.
import fs from 'node:fs';

export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@opentelemetry/') && process.env.MODULE_LOG_FILE) fs.appendFileSync(process.env.MODULE_LOG_FILE, `${specifier}\n`);
  return next(specifier, context);
}
