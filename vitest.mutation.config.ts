import { defineConfig } from 'vitest/config';

// The tests `npm run test:mutation` runs against each mutant: those that cover the guardrails,
// request verification and dedupe, and the create/start/stop handlers (stryker.config.mjs), no more,
// so that a run stays within the time docs/testing.md gives.
export default defineConfig({
  test: {
    include: [
      'test/policy/decide.test.ts',
      'test/pricing/cost.test.ts',
      'test/pricing/instance-types.test.ts',
      'test/store/approvals.test.ts',
      'test/e2e/replays.test.ts',
      'test/store/accept-job.test.ts',
      'test/e2e/instances.test.ts',
      'test/e2e/slow-cloud.test.ts',
      // The handlers called directly against a cloud slower than any lock (retries, takeovers, refusals).
      'test/commands/instance-handlers.test.ts',
      'test/commands/cluster-handlers.test.ts',
      'test/commands/account-handlers.test.ts',
    ],
    globalSetup: ['test/global-setup.ts'],
    // One shape of the end-to-end files: the handlers' code is the same in each, a stack per shape is not.
    testNamePattern: /^(?!.*shape [BC])/,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
