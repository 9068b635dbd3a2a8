import { run as runAck } from './ack.bench.js';
import { run as runE2e } from './e2e.bench.js';
import type { BenchResult } from './run.js';
import { productionBuild } from './support/builds.js';

// The production build (issue 31): scenarios 1 (acknowledgement), 2 (end to end) and 5 (idle RSS) on
// what the image runs, `npm run build`'s dist/ under plain node, against the same baselines compiled
// by tsc (bench/tsconfig.baselines.json) and run by node alone. Same settings and environment
// variables as `ack` and `e2e`; its targets are theirs, named "…, production build". It builds first
// (dist/ and tmp/bench-build/), so it measures the code as checked out.

export async function run(): Promise<BenchResult> {
  const build = await productionBuild();
  // BENCH_DIST_ONLY=ack|e2e: one of the two (a before/after of one scenario).
  const only = process.env.BENCH_DIST_ONLY;
  const none: BenchResult = { name: 'none', rows: [] };
  const ack = only === 'e2e' ? none : await runAck({ build });
  const e2e = only === 'ack' ? none : await runE2e({ build });
  const prefixed = (prefix: string, summary: BenchResult['summary']) =>
    Object.fromEntries(Object.entries(summary ?? {}).map(([k, v]) => [`${prefix}_${k}`, v]));
  return {
    name: 'dist',
    description: `Production build (node dist/cli.js; baselines compiled by tsc, run by node). Acknowledgement: ${ack.description}. End to end: ${e2e.description}`,
    rows: [
      ...ack.rows.map((r) => ({ scenario: 'ack', ...r })),
      ...e2e.rows.map((r) => ({ scenario: 'e2e', ...r })),
    ],
    summary: { ...prefixed('ack', ack.summary), ...prefixed('e2e', e2e.summary) },
    targets: [...(ack.targets ?? []), ...(e2e.targets ?? [])],
  };
}
