import { defineConfig } from 'vitest/config';

// `npm run test:model`: the model-based test of the whole stack (test/model/, docs/testing.md), kept
// out of `npm test`. `npm run test:model -- --runs 500` is the soak: the flag is read here and handed
// to the test as GPUOPS_MODEL_RUNS; GPUOPS_MODEL_SEED replays one run.
const at = process.argv.indexOf('--runs');
if (at > 0 && process.argv[at + 1]) {
  process.env.GPUOPS_MODEL_RUNS = process.argv[at + 1];
  process.argv.splice(at, 2);
}
const seedAt = process.argv.indexOf('--seed');
if (seedAt > 0 && process.argv[seedAt + 1]) {
  process.env.GPUOPS_MODEL_SEED = process.argv[seedAt + 1];
  process.argv.splice(seedAt, 2);
}

export default defineConfig({
  test: {
    include: ['test/model/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // A run of many sequences; the property's own budget ends it well before this.
    testTimeout: 60 * 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
