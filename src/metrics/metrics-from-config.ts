import type { Config } from '../config.js';
import { createMetricCatalog, type MetricCatalog, parseSeriesOverrides } from './catalog.js';
import type { MetricsAuthSettings } from './metrics-auth.js';

// The metrics settings as the environment gives them, read in one place for the bot and for
// `gpuops snapshot`, so a new METRICS_* setting reaches both.

/** Where the metrics read API is and the credentials for it (METRICS_URL must be set). */
export function metricsAuthOf(config: Config): MetricsAuthSettings {
  return {
    metricsUrl: config.METRICS_URL!,
    apiKey: config.METRICS_API_KEY,
    clientId: config.METRICS_CLIENT_ID,
    clientSecret: config.METRICS_CLIENT_SECRET,
    authUrl: config.METRICS_AUTH_URL,
    audience: config.METRICS_AUDIENCE,
  };
}

/** The series `/gpu metrics` charts, with the environment's label names and overrides. */
export function metricCatalogOf(config: Config): MetricCatalog {
  return createMetricCatalog({
    instanceLabel: config.METRICS_INSTANCE_LABEL,
    nameLabel: config.METRICS_NAME_LABEL,
    projectLabel: config.METRICS_PROJECT_LABEL,
    series: parseSeriesOverrides(config.METRICS_SERIES),
  });
}
