import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OPERATIONS } from '../cloud/routes.js';
import { SHAPES } from '../cloud/shape.js';
import { checkToken } from './bearer-auth.js';
import { createFaultGate } from './fault-gate.js';
import { FaultRegistry } from './fault-registry.js';
import { nextRequestId, sendMessage } from './http-io.js';
import { createInfraApi } from './infra-api.js';
import { loadSimMetrics, type SimMetrics } from './metrics-hook.js';
import { createPlatformApi, PLATFORM_OPERATIONS } from './platform-api.js';
import { createSeededRandom } from './seeded-random.js';
import { createSimClock } from './sim-clock.js';
import { createControlApi, createSimControl, type SimControl } from './sim-control.js';
import type { SimCredentials, SimRuntime } from './sim-runtime.js';
import { SimState } from './sim-state.js';
import { createTokenServer, TOKEN_OPERATION } from './token-server.js';

// Starts the cloud simulator: one node:http server whose path prefix picks the part —
// /api/v1alpha1 (infrastructure API), /platform, /auth (token server), /_sim (control),
// /read and /exporter (metrics side, when present). See docs/simulator.md.

export type { SimControl } from './sim-control.js';

export interface SimOptions {
  shape: 'A' | 'B' | 'C';
  /** Default 0 (a free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 1; drives ids, IPs, fault rates and metric patterns. */
  seed?: number;
  /** Default 'real'; 'manual' moves only through the control API or clock.advance(). */
  clock?: 'real' | 'manual';
  /** How long creating→running, stopping→stopped, starting→running, deleting→gone take; default 2000. */
  transitionMs?: number;
  /** Default true: start the metrics side (exporter, gateway, Prometheus when on PATH). */
  metrics?: boolean;
  /** Default: a line on stderr. */
  log?: (line: string) => void;
}

export interface ReadyInfo {
  cloudUrl: string;
  platformUrl: string;
  metricsUrl: string;
  authUrl: string;
  cloudToken: string;
  platformApiKey: string;
  metricsApiKey: string;
  clientId: string;
  clientSecret: string;
  cloudAudience: string;
  metricsAudience: string;
  projectId: string;
  shape: 'A' | 'B' | 'C';
  controlUrl: string;
  metricsAvailable: boolean;
  metricsNote?: string;
}

export interface RunningSim {
  info: ReadyInfo;
  clock: { now(): number; advance(ms: number): Promise<void> };
  control: SimControl;
  close(): Promise<void>;
}

export const DEFAULT_TRANSITION_MS = 2000;
const CLOSE_GRACE_MS = 1000;
const METRICS_CLOSE_LIMIT_MS = 5000;

function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function secret(prefix: string, bytes = 24): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

const stderrLog = (line: string): void => {
  process.stderr.write(`[gpuops sim] ${line}\n`);
};

export async function startSim(options: SimOptions): Promise<RunningSim> {
  if (!(SHAPES as readonly string[]).includes(options.shape)) {
    throw new Error(`shape must be one of ${SHAPES.join(', ')}; got "${String(options.shape)}"`);
  }
  const shape = options.shape;
  const host = options.host ?? '127.0.0.1';
  const seed = options.seed ?? 1;
  const transitionMs = options.transitionMs ?? DEFAULT_TRANSITION_MS;
  if (!Number.isFinite(transitionMs) || transitionMs < 0) throw new Error('transitionMs must be 0 or more');
  const log = options.log ?? stderrLog;

  const clock = createSimClock(options.clock ?? 'real', (err) =>
    log(`transition failed: ${(err as Error).message}`),
  );
  const state = new SimState({ shape, random: createSeededRandom(seed), clock, transitionMs });
  const faults = new FaultRegistry(createSeededRandom(seed ^ 0x5eed5eed), [
    ...OPERATIONS,
    ...PLATFORM_OPERATIONS,
    TOKEN_OPERATION,
  ]);
  const gate = createFaultGate(faults, log);
  const credentials: SimCredentials = {
    cloudToken: secret('sim-cloud-'),
    platformApiKey: secret('sim-platform-'),
    metricsApiKey: secret('sim-metrics-'),
    clientId: secret('sim-client-', 9),
    clientSecret: secret('', 32),
    jwtSecret: randomBytes(32).toString('hex'),
  };

  let dispatch: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    sendMessage(res, 503, 'The simulator is starting; try again in a moment.');
  };
  const server = createServer((req, res) => dispatch(req, res));
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const base = `http://${urlHost(host)}:${port}`;
  const cloudUrl = `${base}/api/v1alpha1`;
  const authUrl = `${base}/auth`;

  const rt: SimRuntime = {
    shape,
    state,
    clock,
    faults,
    gate,
    credentials,
    cloudAudience: cloudUrl,
    metricsAudience: base,
    authUrl,
    log,
  };
  const infra = createInfraApi(rt);
  const platform = createPlatformApi(rt);
  const tokens = createTokenServer(rt);
  const control = createSimControl(rt);
  const controlApi = createControlApi(control, rt);

  let metrics: SimMetrics;
  try {
    metrics = await loadSimMetrics(
      {
        baseUrl: base,
        verifyBearer: (token) =>
          checkToken(token, {
            staticToken: credentials.metricsApiKey,
            jwtSecret: credentials.jwtSecret,
            audience: rt.metricsAudience,
            now: clock.now,
          }) === null,
        runningInstances: () => state.runningInstances(),
        now: clock.now,
        seed,
        log,
      },
      options.metrics ?? true,
    );
  } catch (err) {
    server.close();
    clock.close();
    throw err;
  }

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.setHeader('x-request-id', nextRequestId());
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const under = (prefix: string): string | undefined =>
      path === prefix ? '/' : path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : undefined;

    const api = under('/api/v1alpha1');
    if (api !== undefined)
      return infra.handle(req, res, api, new URLSearchParams(q < 0 ? '' : url.slice(q + 1)));
    const plat = under('/platform');
    if (plat !== undefined) return platform.handle(req, res, plat);
    const auth = under('/auth');
    if (auth !== undefined) return tokens.handle(req, res, auth);
    const sim = under('/_sim');
    if (sim !== undefined) return controlApi.handle(req, res, sim);
    if (under('/read') !== undefined || under('/exporter') !== undefined) {
      if (await metrics.handle(req, res)) return;
      req.resume();
      sendMessage(
        res,
        metrics.available ? 404 : 503,
        metrics.available
          ? `No metrics route ${path}.`
          : `Metrics are not available: ${metrics.reason ?? 'unknown reason'}`,
      );
      return;
    }
    req.resume();
    sendMessage(
      res,
      404,
      `Nothing at ${path}. The simulator serves /api/v1alpha1, /platform, /auth/oauth/token, /_sim, /read and /exporter.`,
    );
  };
  dispatch = (req, res) => {
    route(req, res).catch((err: unknown) => {
      log(`internal error on ${req.method} ${req.url}: ${(err as Error).stack ?? String(err)}`);
      if (!res.headersSent)
        sendMessage(res, 500, `The simulator failed on this request: ${(err as Error).message}`);
      else res.destroy();
    });
  };

  const info: ReadyInfo = {
    cloudUrl,
    platformUrl: `${base}/platform`,
    metricsUrl: `${base}/read`,
    authUrl,
    cloudToken: credentials.cloudToken,
    platformApiKey: credentials.platformApiKey,
    metricsApiKey: credentials.metricsApiKey,
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    cloudAudience: rt.cloudAudience,
    metricsAudience: rt.metricsAudience,
    projectId: state.defaultProjectId,
    shape,
    controlUrl: `${base}/_sim`,
    metricsAvailable: metrics.available,
    ...(metrics.available ? {} : { metricsNote: metrics.reason ?? 'the metrics side is not available' }),
  };
  log(
    `shape ${shape} listening on ${base} (clock ${clock.mode}, transitions ${transitionMs} ms, seed ${seed})`,
  );
  if (!metrics.available) log(`metrics unavailable: ${info.metricsNote}`);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      gate.close();
      clock.close();
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // In-flight requests get a moment to finish; then every socket goes, so close never hangs.
      // Both timers stay referenced: they keep the process alive until close has finished, even when
      // what close waits for (a child process, a socket) holds no reference of its own.
      const force = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
      let limit: NodeJS.Timeout | undefined;
      await Promise.race([
        metrics.close().catch((err: unknown) => log(`metrics close failed: ${(err as Error).message}`)),
        new Promise<void>((resolve) => {
          limit = setTimeout(resolve, METRICS_CLOSE_LIMIT_MS);
        }),
      ]);
      if (limit) clearTimeout(limit);
      await serverClosed;
      clearTimeout(force);
    })();
    return closing;
  };

  return { info, clock: { now: clock.now, advance: clock.advance }, control, close };
}
