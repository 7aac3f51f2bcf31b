import { readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Dialect = 'sqlite' | 'postgresql';

const here = dirname(fileURLToPath(import.meta.url));

/** `0002_add_labels` → `Migration0002AddLabels`. */
function className(name: string): string {
  return `Migration${name.split('_').map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('')}`;
}

/** Names of a dialect's migrations, in order (file names are `NNNN_name.ts`). */
export function migrationNames(dialect: Dialect): string[] {
  return readdirSync(join(here, dialect))
    .filter((file) => /^\d{4}_[a-z0-9_]+\.ts$/.test(file))
    .map((file) => file.slice(0, -3))
    .sort();
}

/**
 * Writes one migration of `dialect` (its statements, in order) and rewrites that dialect's
 * index.ts, the list the ORM runs (static imports, so tsx, vitest and a compiled build all find
 * them without a file-system scan).
 */
export function writeMigration(dialect: Dialect, name: string, statements: string[], comment: string): string {
  const file = join(here, dialect, `${name}.ts`);
  const body = statements.map((sql) => `    this.addSql(${JSON.stringify(sql)});`).join('\n');
  writeFileSync(
    file,
    `import { Migration } from '@mikro-orm/migrations';\n\n/** ${comment} */\nexport class ${className(name)} extends Migration {\n  override async up(): Promise<void> {\n${body}\n  }\n}\n`,
  );
  const names = migrationNames(dialect);
  const list = dialect === 'sqlite' ? 'sqliteMigrations' : 'postgresMigrations';
  writeFileSync(
    join(here, dialect, 'index.ts'),
    `// Written by \`npm run migrate -- create <name>\` (src/db/migrations/files.ts): the ${dialect} schema migrations, in order.\n` +
      `import type { MigrationObject } from '@mikro-orm/core';\n` +
      names.map((n) => `import { ${className(n)} } from './${n}.js';\n`).join('') +
      `\nexport const ${list}: MigrationObject[] = [\n` +
      names.map((n) => `  { name: '${n}', class: ${className(n)} },\n`).join('') +
      `];\n`,
  );
  return file;
}

/** A schema generator's script as single statements (it ends each with `;` and a line break). */
export function statementsOf(sql: string): string[] {
  return sql
    .split(/;\n/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => (s.endsWith(';') ? s.slice(0, -1) : s));
}
