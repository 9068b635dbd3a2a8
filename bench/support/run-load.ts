import { spawnScript } from '../../test/support/gpuops-process.js';
import { SECRET } from './e2e-driver.js';
import type { LoadPlan, LoadReport } from './load-generator.js';

/** Runs the load generator in a child process and resolves with its report. */
export async function runLoad(plan: LoadPlan, timeoutMs = 300_000): Promise<LoadReport> {
  const runner = spawnScript('bench/support/load-generator.ts', { LOAD_PLAN: JSON.stringify(plan) });
  try {
    return (await runner.waitForLog((r) => Array.isArray(r.latenciesMs), timeoutMs)) as unknown as LoadReport;
  } finally {
    await runner.kill();
  }
}

/** The acknowledgement benchmarks' load: signed `/gpu ls` to an app's events URL on this machine. */
export function lsLoad(
  port: unknown,
  userPrefix: string,
  shape: Pick<LoadPlan, 'count' | 'concurrency' | 'warmup'> & { people?: number; channels?: number },
): LoadPlan {
  return {
    origin: `http://127.0.0.1:${port}`,
    path: '/slack/events',
    secret: SECRET,
    text: 'ls',
    userPrefix,
    ...shape,
  };
}
