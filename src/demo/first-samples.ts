import { access } from 'node:fs/promises';
import { staticToken } from '../cloud/index.js';
import { createMetricsClient } from '../metrics/metrics-client.js';

// The demo waits for the simulator's Prometheus to have data before it offers charts.

/** The machine the demo starts with, to try /gpu show and /gpu metrics on. */
export const SEED_INSTANCE = { name: 'demo-1', type: 'h100-hgx-80gb.1x' } as const;
const METRICS_WAIT_MS = 30_000;

export async function canRead(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once the simulator's Prometheus has a sample of the seeded machine, or after the limit. */
export async function waitForFirstSamples(
  metricsUrl: string,
  apiKey: string,
  signal: AbortSignal,
): Promise<boolean> {
  const client = createMetricsClient({ baseUrl: metricsUrl, tokens: staticToken(apiKey), timeoutMs: 2_000 });
  const deadline = Date.now() + METRICS_WAIT_MS;
  while (Date.now() < deadline && !signal.aborted) {
    try {
      const answer = await client.query(`count(DCGM_FI_DEV_GPU_UTIL{instance_name="${SEED_INSTANCE.name}"})`);
      if (answer.data.resultType === 'vector' && answer.data.result.length > 0) return true;
    } catch {
      // Prometheus is still starting: ask again.
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}
