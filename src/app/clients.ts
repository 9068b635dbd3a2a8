import type { Dispatcher } from 'undici';
import {
  clientCredentials,
  createInfraClient,
  createPlatformClient,
  type HttpCallEvent,
  type InfraClient,
  type PlatformClient,
  type RouteTable,
  staticToken,
  type TokenProvider,
} from '../cloud/index.js';
import type { Config } from '../config.js';
import type { Logger } from '../log/logger.js';
import { metricsTokenProvider } from '../metrics/metrics-auth.js';
import { createMetricsClient } from '../metrics/metrics-client.js';
import { metricCatalogOf, metricsAuthOf } from '../metrics/metrics-from-config.js';
import type { BotMetrics } from '../obs/bot-metrics.js';
import { createDependencyHealth, type DependencyHealth } from '../obs/dependency-health.js';
import { spanEnded } from '../obs/trace-spans.js';
import type { SnapshotDeps } from '../snapshot/take-snapshot.js';
import { findChartFonts } from '../sys/fonts.js';
import { noticeCloudRetry } from '../workers/cloud-wait.js';
import { dependencyProbes } from './dependency-probes.js';
import type { Lifecycle } from './lifecycle.js';

// The clients of the cloud, its platform API and its metrics API, built from the configuration:
// only the worker role has them (the listener never calls the cloud). With them, the health of each
// of these APIs (src/obs/dependency-health.ts): probed, and told how every real call went.

function cloudTokens(config: Config): TokenProvider {
  if (config.CLOUD_API_TOKEN) return staticToken(config.CLOUD_API_TOKEN);
  // config.ts already required the client id, secret and token server when there is no static token.
  return clientCredentials({
    authUrl: config.CLOUD_AUTH_URL!,
    clientId: config.CLOUD_CLIENT_ID!,
    clientSecret: config.CLOUD_CLIENT_SECRET!,
    // docs/cloud-api.md: the audience defaults to the API's address.
    audience: config.CLOUD_AUDIENCE ?? config.CLOUD_API_URL!,
  });
}

/**
 * With tracing on, one client span per HTTP try, `gpuops.cloud <operation>`, under the job step that
 * made it: reported once the try is over, so the cloud layer knows nothing of tracing.
 */
function cloudSpan(api: 'infra' | 'platform', e: HttpCallEvent): void {
  const now = Date.now();
  spanEnded(
    `gpuops.cloud ${e.operation}`,
    {
      'gpuops.cloud.api': api,
      'gpuops.cloud.operation': e.operation,
      'http.request.method': e.method,
      ...(typeof e.status === 'number'
        ? {
            'http.response.status_code': e.status,
            'error.type': e.status >= 400 ? String(e.status) : undefined,
          }
        : { 'error.type': e.status }),
    },
    now - e.durationMs,
    now,
  );
}

export interface CloudClients {
  readonly cloud: InfraClient;
  readonly platform: PlatformClient | undefined;
  readonly snapshots: SnapshotDeps | undefined;
}

export function createCloudClients(
  config: Config,
  routes: RouteTable,
  metrics: BotMetrics,
  lifecycle: Lifecycle,
  log: Logger,
): CloudClients & { readonly health: DependencyHealth } {
  const tokens = cloudTokens(config);
  // Late-bound: the probes share the clients' credentials, and the clients report to the health.
  let health: DependencyHealth | undefined;
  // A retry after no answer tells the requester of the job making the call (src/workers/cloud-wait.ts).
  const retry = { onRetry: noticeCloudRetry };
  const cloud = createInfraClient({
    baseUrl: config.CLOUD_API_URL!,
    shape: config.CLOUD_API_SHAPE,
    tokens,
    projectId: config.CLOUD_PROJECT_ID,
    orgId: config.CLOUD_ORG_ID,
    routes,
    timeoutMs: config.CLOUD_TIMEOUT_MS,
    retry,
    onCall: (e) => {
      metrics.cloudCall({ api: 'infra', ...e });
      cloudSpan('infra', e);
      health?.record('cloud', e.status);
    },
  });
  lifecycle.opened('cloud client', () => cloud.close());
  let platform: PlatformClient | undefined;
  if (config.PLATFORM_API_URL && config.PLATFORM_API_KEY) {
    const client = createPlatformClient({
      baseUrl: config.PLATFORM_API_URL,
      apiKey: config.PLATFORM_API_KEY,
      timeoutMs: config.CLOUD_TIMEOUT_MS,
      retry,
      onCall: (e) => {
        metrics.cloudCall({ api: 'platform', ...e });
        cloudSpan('platform', e);
        health?.record('platform', e.status);
      },
    });
    lifecycle.opened('platform client', () => client.close());
    platform = client;
  }
  const snapshots = snapshotDeps(config, log);
  const probes = dependencyProbes({
    config,
    routes,
    cloudTokens: tokens,
    metricsClient: snapshots
      ? (timeoutMs, dispatcher) => metricsClientOf(config, { timeoutMs, dispatcher })
      : undefined,
    lifecycle,
  });
  health = createDependencyHealth(probes, log);
  const checks = health;
  lifecycle.opened('dependency checks', async () => checks.stop());
  return { cloud, platform, snapshots, health };
}

function metricsClientOf(config: Config, options: { timeoutMs?: number; dispatcher?: Dispatcher } = {}) {
  return createMetricsClient({
    baseUrl: config.METRICS_URL!,
    tokens: metricsTokenProvider(metricsAuthOf(config)),
    ...options,
  });
}

/** What `/gpu metrics` needs, or undefined (with a warning saying why) when it is off. */
function snapshotDeps(config: Config, log: Logger): SnapshotDeps | undefined {
  if (!config.METRICS_URL) return undefined;
  const hasCredentials =
    config.METRICS_API_KEY !== undefined ||
    (config.METRICS_CLIENT_ID !== undefined &&
      config.METRICS_CLIENT_SECRET !== undefined &&
      config.METRICS_AUTH_URL !== undefined);
  if (!hasCredentials) {
    log.warn(
      'METRICS_URL is set without credentials: /gpu metrics is off. Set METRICS_API_KEY, or METRICS_CLIENT_ID, METRICS_CLIENT_SECRET and METRICS_AUTH_URL.',
    );
    return undefined;
  }
  let fonts: ReturnType<typeof findChartFonts>;
  try {
    fonts = findChartFonts();
  } catch (err) {
    log.warn({ err }, '/gpu metrics is off: no font for the charts');
    return undefined;
  }
  return {
    client: metricsClientOf(config),
    catalog: metricCatalogOf(config),
    fonts: { fontFiles: fonts.files, fontFamily: fonts.family },
  };
}
