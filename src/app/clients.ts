import {
  clientCredentials,
  createInfraClient,
  createPlatformClient,
  type InfraClient,
  type PlatformClient,
  type RouteTable,
  staticToken,
  type TokenProvider,
} from '../cloud/index.js';
import type { Config } from '../config.js';
import type { Logger } from '../log/logger.js';
import { createMetricCatalog, parseSeriesOverrides } from '../metrics/catalog.js';
import { metricsTokenProvider } from '../metrics/metrics-auth.js';
import { createMetricsClient } from '../metrics/metrics-client.js';
import type { BotMetrics } from '../obs/bot-metrics.js';
import type { SnapshotDeps } from '../snapshot/take-snapshot.js';
import { findChartFonts } from '../sys/fonts.js';
import type { Lifecycle } from './lifecycle.js';

// The clients of the cloud, its platform API and its metrics API, built from the configuration:
// only the worker role has them (the listener never calls the cloud).

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
): CloudClients {
  const cloud = createInfraClient({
    baseUrl: config.CLOUD_API_URL!,
    shape: config.CLOUD_API_SHAPE,
    tokens: cloudTokens(config),
    projectId: config.CLOUD_PROJECT_ID,
    orgId: config.CLOUD_ORG_ID,
    routes,
    timeoutMs: config.CLOUD_TIMEOUT_MS,
    onCall: (e) => metrics.cloudCall({ api: 'infra', ...e }),
  });
  lifecycle.opened('cloud client', () => cloud.close());
  let platform: PlatformClient | undefined;
  if (config.PLATFORM_API_URL && config.PLATFORM_API_KEY) {
    const client = createPlatformClient({
      baseUrl: config.PLATFORM_API_URL,
      apiKey: config.PLATFORM_API_KEY,
      timeoutMs: config.CLOUD_TIMEOUT_MS,
      onCall: (e) => metrics.cloudCall({ api: 'platform', ...e }),
    });
    lifecycle.opened('platform client', () => client.close());
    platform = client;
  }
  return { cloud, platform, snapshots: snapshotDeps(config, log) };
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
    client: createMetricsClient({
      baseUrl: config.METRICS_URL,
      tokens: metricsTokenProvider({
        metricsUrl: config.METRICS_URL,
        apiKey: config.METRICS_API_KEY,
        clientId: config.METRICS_CLIENT_ID,
        clientSecret: config.METRICS_CLIENT_SECRET,
        authUrl: config.METRICS_AUTH_URL,
        audience: config.METRICS_AUDIENCE,
      }),
    }),
    catalog: createMetricCatalog({
      instanceLabel: config.METRICS_INSTANCE_LABEL,
      nameLabel: config.METRICS_NAME_LABEL,
      series: parseSeriesOverrides(config.METRICS_SERIES),
    }),
    fonts: { fontFiles: fonts.files, fontFamily: fonts.family },
  };
}
