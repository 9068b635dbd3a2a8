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
      // The request lifecycle and the approval decision: the sweeper and clicks called directly, the
      // card buttons through Bolt, stale buttons, expiry and the sweeper end to end.
      'test/requests/*.test.ts',
      'test/store/job-record-states.test.ts',
      'test/slack/listeners/approval-actions.test.ts',
      'test/e2e/stale-buttons.test.ts',
      'test/e2e/approvals.test.ts',
      'test/e2e/approval-lifecycle.test.ts',
      // The access gate: the workspace check and the middleware at each door. Not the end-to-end
      // test/e2e/workspace-access.test.ts: under a loaded machine its org-wide case saw the member's
      // `ls` job still queued when it counted jobs, which failed a dry run.
      'test/policy/workspace-access.test.ts',
      'test/policy/access-reasons.test.ts',
      'test/slack/access-gate.test.ts',
      'test/slack/access-refusals.test.ts',
    ],
    globalSetup: ['test/global-setup.ts'],
    // One shape of the end-to-end files: the handlers' code is the same in each, a stack per shape is not.
    // The degraded-mode test (34 s: it starts and stops a replica) is left out: the direct lifecycle
    // tests (test/requests/approved-lifecycle.test.ts) hold an approval without a replica in a second.
    testNamePattern: /^(?!.*(shape [BC]|degraded mode))/,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
