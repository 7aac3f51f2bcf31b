import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node resolves `graphql` to its CommonJS build for our dependencies (Pothos, Yoga); Vite would
    // pick the ESM build for our own files. Two copies break `instanceof` checks, so use one.
    alias: { graphql: require.resolve('graphql') },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // With TEST_DATABASE_URL: the PostgreSQL template database the test apps copy (test/helpers/database.ts).
    globalSetup: ['test/postgres-setup.ts'],
    // Most of a file's time used to be importing the app (MikroORM, Yoga, Pothos, every module).
    // Without isolation a worker imports it once and every later file reuses the module graph;
    // each test still builds its own app on its own in-memory database, and no test mocks modules
    // or leaves fake timers or globals behind (a file that did would need `isolate: true` back).
    pool: 'threads',
    isolate: false,
    // Vitest's default on 2 cores is one worker; the subprocess and HTTP tests mostly wait, so a
    // second worker keeps both cores busy.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
