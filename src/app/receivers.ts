import type { FetchFunction } from '@slack/web-api';
import type { Redis } from 'ioredis';
import type { RouteTable } from '../cloud/index.js';
import type { Config } from '../config.js';
import type { MachineReader } from '../home/home-deps.js';
import type { GpuQueue } from '../jobs/queue.js';
import { type Logger, redactText } from '../log/logger.js';
import type { BotMetrics } from '../obs/bot-metrics.js';
import type { DependencyStatus } from '../obs/dependency-health.js';
import { healthRoutes, type ProbeDeps, readiness } from '../obs/health-routes.js';
import { startRouteServer } from '../obs/route-server.js';
import type { Guardrails } from '../policy/guardrails.js';
import { createSlackSocket, createSlackWeb, type SlackClientOptions } from '../slack/create-slack-app.js';
import type { SlackDeps } from '../slack/slack-deps.js';
import type { Sealer } from '../store/sealed.js';
import type { Store } from '../store/store.js';
import { homeChartFonts } from './home-fonts.js';
import { homeByWorker } from './home-machines.js';
import { type Lifecycle, StartError, within } from './lifecycle.js';
import { createMoney } from './money.js';
import { replicationGuards } from './replication.js';
import { TOKEN_REFUSED } from './slack-token.js';

// The web role's doors: the operations port (OPS_PORT: /healthz, /readyz and /metrics), and Slack's
// requests over HTTP (POST /slack/events on PORT, beside /healthz only), Socket Mode, or a receiver of
// the caller's (the demo's terminal chat). Command counts and Slack error codes stay off the public port.

/** What a custom listener gets: the listeners' deps and the Slack settings every receiver uses. */
export type ListenerFactory = (
  deps: Omit<SlackDeps, 'client' | 'ports'>,
  slack: {
    readonly botToken: string;
    readonly slackApiUrl: string;
    readonly botId: string | undefined;
    readonly botUserId: string;
    readonly clientOptions: SlackClientOptions;
  },
) => Promise<{ stop(): Promise<void> }>;

export interface Receivers {
  /** PORT's bound port in HTTP mode; otherwise the operations port (the only one open). */
  readonly port: number;
  /** The operations port: /healthz, /readyz, /metrics. */
  readonly opsPort: number;
  /** Stops taking Slack requests (the probes stay until the lifecycle closes them). */
  readonly stopSlack: (() => Promise<void>) | undefined;
}

export async function startReceivers(input: {
  readonly config: Config;
  readonly web: boolean;
  readonly socketMode: boolean;
  readonly host: string;
  readonly bot: {
    readonly botId: string | undefined;
    readonly botUserId: string;
    readonly teamId?: string | undefined;
    readonly enterpriseId?: string | undefined;
  };
  readonly store: Store;
  readonly queue: GpuQueue;
  /** The queue's own connection: WAIT on it covers the jobs the queue added. */
  readonly queueRedis: Redis;
  readonly sealer: Sealer;
  readonly guardrails: Guardrails;
  readonly routes: RouteTable;
  readonly metrics: BotMetrics;
  readonly slackFetch: FetchFunction;
  readonly listener: ListenerFactory | undefined;
  readonly shuttingDown: () => boolean;
  /** The cloud, platform and metrics APIs' states, where this process calls them (the worker role). */
  readonly dependencies?: () => readonly DependencyStatus[];
  /** Reads unwatched projects' machines for Home tabs, where this process has the cloud client. */
  readonly readMachines?: MachineReader | undefined;
  readonly startTimeoutMs: number;
  /** Redis' maxmemory-policy as read at start, when Redis told it. */
  readonly evictionPolicy?: string | undefined;
  readonly lifecycle: Lifecycle;
  readonly log: Logger;
  /** How long an approved request may wait for its job to be stored (BotOptions.approvedRunWithinMs). */
  readonly runWithinMs?: number | undefined;
}): Promise<Receivers> {
  const { config, web, socketMode, host, bot, store, queue, metrics, lifecycle } = input;
  const guards = replicationGuards(input.queueRedis, config);
  const probeDeps: ProbeDeps = {
    redisPing: () => store.redis.ping(),
    queueCheck: () => queue.getJobCounts('active'),
    metrics,
    shuttingDown: input.shuttingDown,
    ...(input.dependencies ? { dependencies: input.dependencies } : {}),
    ...(input.evictionPolicy ? { redisEvictionPolicy: input.evictionPolicy } : {}),
    ...(guards.degraded ? { replication: guards.degraded } : {}),
  };
  const probes = healthRoutes(probeDeps);
  // gpuops_ready and gpuops_degraded_mode read what /readyz would answer at each scrape.
  metrics.watchReadiness(async () => (await readiness(probeDeps)).status === 200);
  metrics.watchApprovals(() => input.guardrails.approvals.countWaiting());
  const shortage = guards.degraded;
  if (shortage) metrics.watchDegradedMode(async () => (await shortage()) !== undefined);
  const clientOptions: SlackClientOptions = {
    fetch: input.slackFetch,
    // Within Slack's three seconds: one quick retry, then the listener answers on its own.
    retryConfig: { retries: 1, minTimeout: 200, maxTimeout: 500 },
    timeout: 2_500,
  };
  const homeFonts = homeChartFonts(input.log);
  const deps: Omit<SlackDeps, 'client' | 'ports'> = {
    queue,
    store,
    log: input.log,
    shape: config.CLOUD_API_SHAPE,
    routes: input.routes,
    defaultProjectId: config.CLOUD_PROJECT_ID,
    sealer: input.sealer,
    onCommand: (kind) => metrics.commandReceived(kind),
    guardrails: input.guardrails,
    // On a replicated Redis an acknowledgement means the job is on a replica too (docs/operations.md);
    // without one, changes are refused and lookups answered (degraded mode, docs/reliability.md).
    replicated: guards.replicated,
    degraded: guards.degraded,
    runWithinMs: input.runWithinMs,
    botTeamId: bot.teamId,
    botEnterpriseId: bot.enterpriseId,
    homeFonts,
    homeBudgets: createMoney({
      store,
      policy: input.guardrails.policy,
      fonts: homeFonts,
      leases: input.guardrails.leases,
    }).home,
    ...(input.readMachines
      ? { homeMachines: input.readMachines }
      : { homeLater: homeByWorker(input.queueRedis, lifecycle) }),
  };
  const listen = async <T>(key: 'PORT' | 'OPS_PORT', start: () => Promise<T>): Promise<T> => {
    try {
      return await start();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'EADDRINUSE' || code === 'EACCES') {
        throw new StartError(
          `Cannot listen on port ${config[key]} (${code}): set ${key} to a free port for this process.`,
          err,
        );
      }
      throw err;
    }
  };
  const slackSettings = {
    botToken: config.SLACK_BOT_TOKEN!,
    slackApiUrl: config.SLACK_API_URL,
    botId: bot.botId,
    botUserId: bot.botUserId,
    clientOptions,
  };

  // Every role: the operations server on OPS_PORT, for probes and Prometheus inside the cluster.
  const server = await listen('OPS_PORT', () => startRouteServer(probes, config.OPS_PORT, host));
  lifecycle.opened('probes', () => server.close());
  const opsPort = server.port;

  if (web && !socketMode && !input.listener) {
    // The public port keeps /healthz for load balancers that probe the port they send traffic to.
    const publicRoutes = probes.filter((r) => r.path === '/healthz');
    const slack = createSlackWeb(
      {
        ...slackSettings,
        signingSecret: config.SLACK_SIGNING_SECRET!,
        routes: publicRoutes,
        onAnswered: (ms) => metrics.slackAnswered(ms),
      },
      deps,
    );
    const port = await listen('PORT', () => slack.start(config.PORT, host));
    lifecycle.opened('slack', () => slack.stop());
    return { port, opsPort, stopSlack: () => slack.stop() };
  }

  if (web && input.listener) {
    const custom = await input.listener(deps, slackSettings);
    lifecycle.opened('slack', () => custom.stop());
    return { port: opsPort, opsPort, stopSlack: () => custom.stop() };
  }
  if (!socketMode) return { port: opsPort, opsPort, stopSlack: undefined };
  const slack = createSlackSocket({ ...slackSettings, appToken: config.SLACK_APP_TOKEN! }, deps);
  lifecycle.opened('slack', () => slack.stop());
  try {
    await within(
      slack.start(),
      input.startTimeoutMs,
      () => new Error(`Slack did not open the connection within ${input.startTimeoutMs} ms`),
    );
  } catch (err) {
    const code = (err as { data?: { error?: string } }).data?.error;
    throw new StartError(
      code && TOKEN_REFUSED.has(code)
        ? `Slack refused SLACK_APP_TOKEN (${code}): create an app-level token (xapp-…) with connections:write under Basic Information.`
        : `Could not open the Socket Mode connection (${redactText(code ?? (err as Error).message)}): check SLACK_APP_TOKEN and that Socket Mode is on for the app.`,
      err,
    );
  }
  return { port: opsPort, opsPort, stopSlack: () => slack.stop() };
}
