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
    // Files run in parallel (one in-memory database each); tests inside a file run in order.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
