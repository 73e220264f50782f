/**
 * The module boundaries of docs/architecture.md, checked by `npm run lint` (and so by CI).
 * A module imports its own files, the shared kernel (src/kernel), the HTTP platform
 * (src/http), src/db, and another module only through that module's entry (`*.module.ts`).
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles hide the direction of a dependency; break them with a port. Anywhere in the repository: the service, the SDK, the scripts and the tests.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'module-via-its-entry',
      severity: 'error',
      comment: "Another module is reached only through its *.module.ts: what it offers, not how it works inside.",
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/[^/]+[.]module[.]ts$'] },
    },
    {
      name: 'outside-reaches-modules-via-their-entry',
      severity: 'error',
      comment: 'The configuration, the HTTP platform, the composition root, the CLI and the scripts reach a module only through its *.module.ts, as modules reach each other.',
      from: { path: '^(src/(config|http|cli|db)/|src/[^/]+[.]ts$|scripts/)', pathNot: '^src/db/(schema[.]ts|migrations/)' },
      to: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/[^/]+[.]module[.]ts$' },
    },
    {
      name: 'module-imports-kernel-db-http-only',
      severity: 'error',
      comment: 'Modules never see the composition root (src/modules.ts), the app, the server, the CLI or the configuration: they get what they need through their factory options.',
      from: { path: '^src/modules/' },
      to: { path: '^src/', pathNot: ['^src/(kernel|db|http|modules)/'] },
    },
    {
      name: 'kernel-stands-alone',
      severity: 'error',
      comment: 'The shared kernel is what every module uses; it uses nothing of ours.',
      from: { path: '^src/kernel/' },
      to: { path: '^src/', pathNot: '^src/kernel/' },
    },
    {
      name: 'platform-knows-no-module',
      severity: 'error',
      comment: 'The HTTP platform and the database layer serve every module and name none (db/schema.ts assembles the table types, and only those).',
      from: { path: '^src/(http|db)/', pathNot: '^src/db/schema[.]ts$' },
      to: { path: '^src/(modules|modules[.]ts|app[.]ts|server[.]ts|cli|bootstrap[.]ts|jobs[.]ts)' },
    },
    {
      name: 'schema-assembles-tables-only',
      severity: 'error',
      from: { path: '^src/db/schema[.]ts$' },
      to: { path: '^src/modules/', pathNot: '[.]table[.]ts$' },
    },
    {
      name: 'opentelemetry-in-one-file',
      severity: 'error',
      comment: 'Tracing off loads no OpenTelemetry: only src/kernel/opentelemetry.ts imports it, and only src/kernel/start-tracing.ts loads that file (a dynamic import; test/architecture/opentelemetry-isolation.test.ts).',
      from: { path: '^src/', pathNot: '^src/kernel/opentelemetry[.]ts$' },
      to: { path: '@opentelemetry/' },
    },
    {
      name: 'no-test-code-in-src',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|test|bench|scripts|packages/sdk/src)/',
    // Type-only imports count: a cycle through types is still a cycle in the design.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
