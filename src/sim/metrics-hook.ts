import type { IncomingMessage, ServerResponse } from 'node:http';

// The seam to the metrics side (src/sim/metrics/index.ts, written separately): the GPU exporter and
// the Prometheus gateway under /read and /exporter. Loaded lazily so the simulator runs without it.

export interface SimMetricsContext {
  baseUrl: string;
  verifyBearer(token: string): boolean;
  runningInstances(): Array<{
    id: string;
    name: string;
    type: string;
    projectId: string;
    gpuCount: number;
    gpuModel: string;
    gpuMemoryGiB: number;
    maxPowerWatts: number;
    startedAt: number;
    load: 'idle' | 'busy' | 'auto';
  }>;
  now(): number;
  seed: number;
  log(line: string): void;
}

export interface SimMetrics {
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  readonly available: boolean;
  readonly reason?: string;
  close(): Promise<void>;
}

type StartSimMetrics = (ctx: SimMetricsContext) => Promise<SimMetrics>;

// A specifier in a variable: the type check must not require the module to exist yet.
const METRICS_MODULE: string = './metrics/index.js';

export function unavailableMetrics(reason: string): SimMetrics {
  return { handle: async () => false, available: false, reason, close: async () => {} };
}

export async function loadSimMetrics(ctx: SimMetricsContext, enabled: boolean): Promise<SimMetrics> {
  if (!enabled) return unavailableMetrics('metrics are turned off for this simulator (metrics: false).');
  let start: StartSimMetrics | undefined;
  try {
    const mod = (await import(METRICS_MODULE)) as { startSimMetrics?: StartSimMetrics };
    start = mod.startSimMetrics;
  } catch (err) {
    const code = (err as { code?: string }).code;
    const missing =
      code === 'ERR_MODULE_NOT_FOUND' ||
      /Cannot find module|Failed to load|does not exist/i.test(String(err));
    return unavailableMetrics(
      missing
        ? 'the metrics side (src/sim/metrics) is not part of this build, so /read and /exporter are not served.'
        : `the metrics side failed to load: ${(err as Error).message}`,
    );
  }
  if (typeof start !== 'function')
    return unavailableMetrics('the metrics module exports no startSimMetrics().');
  try {
    return await start(ctx);
  } catch (err) {
    return unavailableMetrics(`the metrics side failed to start: ${(err as Error).message}`);
  }
}
