// Mutation testing of what must never break (docs/testing.md): policy decisions, costs, the approvals
// store and its Lua scripts, replay refusal and request dedupe, the create/start/stop handlers, the
// request lifecycle, the approval decision and the access gate.
// `npm run test:mutation`; the report goes to reports/mutation/. Not part of CI: it takes minutes.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner'],
  coverageAnalysis: 'perTest',
  // TypeScript 7 has no JavaScript API for Stryker's tsconfig rewrite, and vitest needs none: name a
  // file that does not exist so that the sandbox keeps tsconfig.json as it is.
  tsconfigFile: 'tsconfig.stryker-none.json',
  // The machine is shared: one mutant at a time per core at most.
  concurrency: 2,
  timeoutMS: 20_000,
  // A second run tests only the mutants whose code or covering tests changed (reports/mutation/).
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  mutate: [
    'src/policy/decide.ts',
    'src/pricing/cost.ts',
    'src/pricing/price-for-type.ts',
    'src/store/approvals.ts',
    'src/store/approval-scripts.ts',
    'src/store/approval-record.ts',
    // The trigger (replay) and dedupe claims with the job record, and the request's fingerprint.
    'src/store/store.ts:226-292',
    'src/requests/enqueue-request.ts:76-170',
    // resolve, wait, start/stop and create.
    'src/commands/instances/handlers.ts:18-117',
    'src/commands/instances/handlers.ts:149-217',
    // The request lifecycle: the approval step (whole file), the accept step from the approval need on
    // (a card with nowhere to go, a schedule's firing, degraded mode, the queued request and its audit
    // entry; the cost lookup above it is the pricing rows' business), the approved half (deadline,
    // held, lapsed, the sweeper) and a job record's state changes.
    'src/requests/request-approval.ts',
    'src/requests/accept-request.ts:257-395',
    'src/requests/drive-approved.ts',
    'src/store/job-record.ts:51-67',
    // The approval decision: one decision wins, refusals, expiry, stale clicks and their repairs.
    'src/requests/decide-approval.ts',
    // The access gate: who reaches gpuops at all (workspace, guests, deactivated accounts), the Slack
    // middleware that answers a refusal at its door, and the role check of the request path.
    'src/policy/workspace-access.ts',
    'src/slack/access-gate.ts',
    'src/requests/accept-request.ts:81-152',
  ],
  ignoreStatic: true,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
