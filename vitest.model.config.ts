import { defineConfig } from 'vitest/config';

// `npm run test:model`: the model-based test of the whole stack (test/model/, docs/testing.md), kept
// out of `npm test`. `npm run test:model -- --runs 500` is the soak (scripts/test-model.ts hands the
// flag to the test as GPUOPS_MODEL_RUNS); GPUOPS_MODEL_SEED replays one run.
export default defineConfig({
  test: {
    include: ['test/model/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // A run of many sequences; the property's own budget (GPUOPS_MODEL_TIME_LIMIT_MS, default 20
    // minutes) ends it, so the test's timeout follows that budget with room for the last sequence and
    // the report: a soak given hours is not cut off by vitest at a fixed hour.
    testTimeout: Number(process.env.GPUOPS_MODEL_TIME_LIMIT_MS ?? 20 * 60_000) + 40 * 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
