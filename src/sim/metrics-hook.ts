import { type SimMetrics, type SimMetricsContext, startSimMetrics } from './metrics/index.js';

// The seam to the metrics side (src/sim/metrics/): the GPU exporter and the Prometheus gateway under
// /read and /exporter. A simulator started with metrics off, or whose Prometheus cannot start, still
// serves everything else and says why metrics are unavailable.

export type { SimMetrics, SimMetricsContext };

export function unavailableMetrics(reason: string): SimMetrics {
  return { handle: async () => false, available: false, reason, close: async () => {} };
}

export async function loadSimMetrics(ctx: SimMetricsContext, enabled: boolean): Promise<SimMetrics> {
  if (!enabled) return unavailableMetrics('metrics are turned off for this simulator (metrics: false).');
  try {
    return await startSimMetrics(ctx);
  } catch (err) {
    return unavailableMetrics(`the metrics side failed to start: ${(err as Error).message}`);
  }
}
