#!/usr/bin/env node
// `npm run build`: compiles src/, schema/ and rest/ to dist/ with tsc (tsconfig.build.json), copies
// the files they read at run time (GraphQL operation documents, the console's static files), and
// writes the entry points dist/server.js, dist/cli.js and dist/migrate.js. The result runs on plain node: no
// TypeScript compiler or loader at run time.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

/** Every file of `dir` that is not TypeScript source, copied to the same place under dist/. */
function copyAssets(dir) {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(path);
    else if (extname(entry.name) !== '.ts') {
      mkdirSync(join(dist, dir), { recursive: true });
      cpSync(join(root, path), join(dist, path));
    }
  }
}
for (const dir of ['src', 'schema', 'rest']) copyAssets(dir);
// The console is served from ../../console relative to src/http/, so it sits beside dist/src.
if (existsSync(join(root, 'console'))) cpSync(join(root, 'console'), join(dist, 'console'), { recursive: true });

for (const name of ['server', 'cli', 'migrate'].filter((n) => existsSync(join(root, 'src', `${n}.ts`)))) {
  writeFileSync(join(dist, `${name}.js`), `// Written by scripts/build.mjs: the compiled src/${name}.ts.\nimport './src/${name}.js';\n`);
}
console.log('Built dist/: node dist/server.js (the server), node dist/cli.js (the CLI), node dist/migrate.js (migrations).');
