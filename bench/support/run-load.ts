import { spawnScript } from '../../test/support/gpuops-process.js';
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
