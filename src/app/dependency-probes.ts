import { Agent } from 'undici';
import {
  CloudApiError,
  CloudNetworkError,
  CloudTimeoutError,
  createHttpClient,
  createInfraClient,
  createPlatformClient,
  type RouteTable,
  type TokenProvider,
} from '../cloud/index.js';
import type { Config } from '../config.js';
import { AppError, ErrorCode } from '../errors.js';
import type { MetricsClient } from '../metrics/metrics-client.js';
import { MetricsError } from '../metrics/metrics-error.js';
import { type DependencyProbe, type DependencyState, safeUrl } from '../obs/dependency-health.js';
import { type Lifecycle, within } from './lifecycle.js';

// One cheap call per configured API, with a short time limit and no retries, to say at start-up (and
// every so often after) whether it answers. Any HTTP answer means reachable: a 404 on the probe is
// still an API that answers; a 401 or 403 means it answers but refuses gpuops' credentials.

/** The probe's time limit: a reachability check, not a request someone waits for. */
export const PROBE_TIMEOUT_MS = 3_000;

const NO_RETRY = { maxAttempts: 1 } as const;

function classifyCloud(err: unknown): { state: DependencyState; detail: string } {
  if (err instanceof CloudNetworkError) return { state: 'unreachable', detail: err.errCode ?? err.message };
  if (err instanceof CloudTimeoutError)
    return { state: 'unreachable', detail: `no answer within ${err.timeoutMs} ms` };
  if (err instanceof CloudApiError) {
    if (err.status === 401 || err.status === 403) return { state: 'refused', detail: `HTTP ${err.status}` };
    if (err.status >= 500) return { state: 'failing', detail: `HTTP ${err.status}` };
    return { state: 'ok', detail: '' };
  }
  // The token server (client credentials) could not be reached or refused the client.
  if (err instanceof AppError && err.code === ErrorCode.Auth)
    return { state: 'refused', detail: err.message };
  if (err instanceof ProbeTimeout) return { state: 'unreachable', detail: err.message };
  // Anything else came from an answer (a body not as expected, a check before sending): it answers.
  return { state: 'ok', detail: '' };
}

function classifyMetrics(err: unknown): { state: DependencyState; detail: string } {
  if (err instanceof MetricsError) {
    if (err.errorType === 'network' || err.errorType === 'timeout')
      return { state: 'unreachable', detail: err.errorType };
    if (err.status === 401 || err.status === 403) return { state: 'refused', detail: `HTTP ${err.status}` };
    if (err.status !== undefined && err.status >= 500)
      return { state: 'failing', detail: `HTTP ${err.status}` };
    return { state: 'ok', detail: '' };
  }
  return classifyCloud(err);
}

class ProbeTimeout extends Error {}

/** The probe's call, cut off after the limit even where a token request has a longer one of its own. */
function bounded(run: () => Promise<unknown>): () => Promise<unknown> {
  return () =>
    within(run(), PROBE_TIMEOUT_MS + 500, () => new ProbeTimeout(`no answer within ${PROBE_TIMEOUT_MS} ms`));
}

export function dependencyProbes(input: {
  readonly config: Config;
  readonly routes: RouteTable;
  readonly cloudTokens: TokenProvider;
  readonly metricsClient: ((timeoutMs: number, dispatcher: Agent) => MetricsClient) | undefined;
  readonly lifecycle: Lifecycle;
}): DependencyProbe[] {
  const { config, lifecycle } = input;
  const timeoutMs = Math.min(config.CLOUD_TIMEOUT_MS, PROBE_TIMEOUT_MS);
  const probes: DependencyProbe[] = [];
  // A new connection for every check: a kept-alive socket the server closed long ago says nothing
  // about whether it answers now.
  const dispatcher = new Agent({ pipelining: 0 });
  lifecycle.opened('probe connections', () => dispatcher.close());

  const cloudUrl = config.CLOUD_API_URL!;
  const cloudCredentials = config.CLOUD_API_TOKEN
    ? 'CLOUD_API_TOKEN'
    : 'CLOUD_CLIENT_ID, CLOUD_CLIENT_SECRET, CLOUD_AUTH_URL and CLOUD_AUDIENCE';
  let runCloud: () => Promise<unknown>;
  if (config.CLOUD_PROJECT_ID) {
    // The list a `/gpu ls` makes: it also proves the credentials and the project.
    const infra = createInfraClient({
      ...{ baseUrl: cloudUrl, shape: config.CLOUD_API_SHAPE, tokens: input.cloudTokens },
      ...{ projectId: config.CLOUD_PROJECT_ID, orgId: config.CLOUD_ORG_ID, routes: input.routes },
      ...{ timeoutMs, retry: NO_RETRY, dispatcher },
    });
    runCloud = () => infra.listInstances();
  } else {
    // No project to list in: the API's address itself, with the credentials.
    const http = createHttpClient({
      ...{ baseUrl: cloudUrl, auth: { kind: 'bearer', tokens: input.cloudTokens } },
      ...{ timeoutMs, retry: NO_RETRY, dispatcher },
    });
    runCloud = () => http.send({ operation: 'probe', method: 'GET', path: '/' });
  }
  probes.push({
    name: 'cloud',
    label: 'The cloud API',
    urlSetting: 'CLOUD_API_URL',
    url: safeUrl(cloudUrl),
    credentialSettings: config.CLOUD_PROJECT_ID
      ? `${cloudCredentials}, and that CLOUD_PROJECT_ID is a project these credentials may use`
      : cloudCredentials,
    run: bounded(runCloud),
    classify: classifyCloud,
  });

  if (config.PLATFORM_API_URL && config.PLATFORM_API_KEY) {
    const platform = createPlatformClient({
      ...{ baseUrl: config.PLATFORM_API_URL, apiKey: config.PLATFORM_API_KEY },
      ...{ timeoutMs, retry: NO_RETRY, dispatcher },
    });
    probes.push({
      name: 'platform',
      label: 'The platform API',
      urlSetting: 'PLATFORM_API_URL',
      url: safeUrl(config.PLATFORM_API_URL),
      credentialSettings: 'PLATFORM_API_KEY',
      run: bounded(() => platform.listSshKeys()),
      classify: classifyCloud,
    });
  }

  if (config.METRICS_URL && input.metricsClient) {
    const metrics = input.metricsClient(timeoutMs, dispatcher);
    probes.push({
      name: 'metrics',
      label: 'The metrics API',
      urlSetting: 'METRICS_URL',
      url: safeUrl(config.METRICS_URL),
      credentialSettings: config.METRICS_API_KEY
        ? 'METRICS_API_KEY'
        : 'METRICS_CLIENT_ID, METRICS_CLIENT_SECRET and METRICS_AUTH_URL',
      run: bounded(() => metrics.query('1')),
      classify: classifyMetrics,
    });
  }
  return probes;
}
