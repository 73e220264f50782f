/**
 * Who owns each table, derived rather than written twice: src/db/schema.ts types each table of
 * `DB` with an interface imported from one module's `*.table.ts`. Read by the table-ownership
 * test (test/architecture) and by scripts/architecture-docs.ts, which prints the same map.
 */

/** Where a file sits in the owner map: `src/modules/<module>/…` → module, anything else (src/db/deployment.table.ts) → its directory. */
function ownerOfImport(specifier: string): string {
  const inModule = /^\.\.\/modules\/([^/]+)\//.exec(specifier);
  return inModule ? inModule[1]! : `src/db`;
}

/** Table → owning module, from src/db/schema.ts: `interface DB { table: TypeName }` and where TypeName is imported from. In `DB`'s order. */
export function tableOwners(schemaSource: string): Map<string, string> {
  const typeOwner = new Map<string, string>();
  for (const [, names, from] of schemaSource.matchAll(/import\s*\{([^}]*)\}\s*from\s*'([^']+)'/g)) {
    for (const name of names!.split(',')) {
      const typeName = name.trim().replace(/^type\s+/, '');
      if (typeName) typeOwner.set(typeName, ownerOfImport(from!));
    }
  }
  const body = /export interface DB \{([^}]*)\}/.exec(schemaSource)?.[1];
  if (!body) throw new Error('src/db/schema.ts: no `export interface DB { … }`');
  const owners = new Map<string, string>();
  for (const [, table, typeName] of body.matchAll(/^\s*([a-z_]+)\s*:\s*([A-Za-z]+)\s*;/gm)) {
    const owner = typeOwner.get(typeName!);
    if (!owner) throw new Error(`src/db/schema.ts: ${table}'s type ${typeName} is not imported from a *.table.ts`);
    owners.set(table!, owner);
  }
  return owners;
}
