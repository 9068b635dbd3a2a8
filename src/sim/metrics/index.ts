import type { IncomingMessage, ServerResponse } from 'node:http';
import { ensureBinary } from '../../sys/ensure-binary.js';
import { createGpuExporter, EXPORTER_CONTENT_TYPE } from './exporter.js';
import { handleGateway, sendError } from './gateway.js';
import type { LoadSetting } from './gpu-pattern.js';
import { type RunningPrometheus, startPrometheus } from './prometheus.js';

// The simulator's metrics side: the GPU exporter at /exporter/metrics, a real Prometheus scraping it,
// and the authenticated read gateway at /read/api/v1/*. The sim server hands every request to handle().

export interface SimMetricsInstance {
  id: string;
  name: string;
  type: string;
  projectId: string;
  gpuCount: number;
  gpuModel: string;
  gpuMemoryGiB: number;
  maxPowerWatts: number;
  startedAt: number;
  load: LoadSetting;
}

export interface SimMetricsContext {
  /** Where the sim server listens, e.g. http://127.0.0.1:4000 (Prometheus scrapes ${baseUrl}/exporter/metrics). */
  baseUrl: string;
  verifyBearer(token: string): boolean;
  runningInstances(): SimMetricsInstance[];
  now(): number;
  seed: number;
  log(line: string): void;
  /** Which prometheus to run; default the one on PATH. Tests point it at a missing file to see the unavailable path. */
  prometheusBinary?: string;
}

export interface SimMetrics {
  /** True when it answered the request (exporter or /read/…); false leaves it to the sim server. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** False when no Prometheus runs; `reason` then says why and how to install it. */
  readonly available: boolean;
  readonly reason?: string;
  /** The Prometheus behind the gateway (no auth), for tests that compare answers; undefined when unavailable. */
  readonly prometheusUrl?: string;
  close(): Promise<void>;
}

export const EXPORTER_PATH = '/exporter/metrics';
export const READ_PREFIX = '/read';

export async function startSimMetrics(ctx: SimMetricsContext): Promise<SimMetrics> {
  const exporter = createGpuExporter(ctx.seed);
  let prometheus: RunningPrometheus | undefined;
  let reason: string | undefined;
  try {
    const binary = await ensureBinary(ctx.prometheusBinary ?? 'prometheus', {
      debianPackage: 'prometheus',
      install: false,
      otherwise: 'install Prometheus 2.x and put it on PATH',
      log: ctx.log,
    });
    prometheus = await startPrometheus({
      binary,
      scrapeUrl: `${ctx.baseUrl.replace(/\/+$/, '')}${EXPORTER_PATH}`,
      log: ctx.log,
    });
  } catch (err) {
    reason = `GPU metrics are unavailable: ${(err as Error).message}`;
    ctx.log(reason);
  }
  let closed = false;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const path = (req.url ?? '/').split('?')[0];
    if (path === EXPORTER_PATH) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET');
        sendError(res, 405, 'bad_data', 'The exporter answers GET only.');
        return true;
      }
      res.writeHead(200, { 'content-type': EXPORTER_CONTENT_TYPE });
      if (req.method === 'HEAD') {
        res.end();
        return true;
      }
      // Chunked, one piece per metric family: a 10,000-instance fleet is ~100 MB, never joined.
      for (const chunk of exporter.renderChunks(ctx.runningInstances(), ctx.now())) res.write(chunk);
      res.end();
      return true;
    }
    return handleGateway(req, res, {
      prefix: READ_PREFIX,
      verifyBearer: (token) => ctx.verifyBearer(token),
      upstream: () =>
        prometheus && !closed
          ? { url: prometheus.url }
          : { reason: reason ?? 'GPU metrics are unavailable: the simulator is shutting down.' },
    });
  }

  return {
    handle,
    available: prometheus !== undefined,
    ...(reason !== undefined ? { reason } : {}),
    ...(prometheus ? { prometheusUrl: prometheus.url } : {}),
    async close() {
      closed = true;
      await prometheus?.close();
    },
  };
}
