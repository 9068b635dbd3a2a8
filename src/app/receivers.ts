import type { FetchFunction } from '@slack/web-api';
import type { RouteTable } from '../cloud/index.js';
import type { Config } from '../config.js';
import type { GpuQueue } from '../jobs/queue.js';
import { type Logger, redactText } from '../log/logger.js';
import type { BotMetrics } from '../obs/bot-metrics.js';
import type { DependencyStatus } from '../obs/dependency-health.js';
import { healthRoutes } from '../obs/health-routes.js';
import { startRouteServer } from '../obs/route-server.js';
import type { Guardrails } from '../policy/guardrails.js';
import { createSlackSocket, createSlackWeb, type SlackClientOptions } from '../slack/create-slack-app.js';
import type { SlackDeps } from '../slack/slack-deps.js';
import type { Sealer } from '../store/sealed.js';
import type { Store } from '../store/store.js';
import { type Lifecycle, StartError, within } from './lifecycle.js';
import { TOKEN_REFUSED } from './slack-token.js';

// The web role's doors: /healthz, /readyz and /metrics, and Slack's requests over HTTP
// (POST /slack/events), Socket Mode, or a receiver of the caller's (the demo's terminal chat).

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
  readonly port: number;
  /** Stops taking Slack requests (the probes stay until the lifecycle closes them). */
  readonly stopSlack: (() => Promise<void>) | undefined;
}

export async function startReceivers(input: {
  readonly config: Config;
  readonly web: boolean;
  readonly socketMode: boolean;
  readonly host: string;
  readonly bot: { readonly botId: string | undefined; readonly botUserId: string };
  readonly store: Store;
  readonly queue: GpuQueue;
  readonly sealer: Sealer;
  readonly guardrails: Guardrails;
  readonly routes: RouteTable;
  readonly metrics: BotMetrics;
  readonly slackFetch: FetchFunction;
  readonly listener: ListenerFactory | undefined;
  readonly shuttingDown: () => boolean;
  /** The cloud, platform and metrics APIs' states, where this process calls them (the worker role). */
  readonly dependencies?: () => readonly DependencyStatus[];
  readonly startTimeoutMs: number;
  readonly lifecycle: Lifecycle;
  readonly log: Logger;
}): Promise<Receivers> {
  const { config, web, socketMode, host, bot, store, queue, metrics, lifecycle } = input;
  const probes = healthRoutes({
    redisPing: () => store.redis.ping(),
    queueCheck: () => queue.getJobCounts('active'),
    metrics,
    shuttingDown: input.shuttingDown,
    ...(input.dependencies ? { dependencies: input.dependencies } : {}),
  });
  const clientOptions: SlackClientOptions = {
    fetch: input.slackFetch,
    // Within Slack's three seconds: one quick retry, then the listener answers on its own.
    retryConfig: { retries: 1, minTimeout: 200, maxTimeout: 500 },
    timeout: 2_500,
  };
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
  };
  const listen = async <T>(start: () => Promise<T>): Promise<T> => {
    try {
      return await start();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'EADDRINUSE' || code === 'EACCES') {
        throw new StartError(
          `Cannot listen on port ${config.PORT} (${code}): set PORT to a free port for this process.`,
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

  if (web && !socketMode && !input.listener) {
    const slack = createSlackWeb(
      { ...slackSettings, signingSecret: config.SLACK_SIGNING_SECRET!, routes: probes },
      deps,
    );
    const port = await listen(() => slack.start(config.PORT, host));
    lifecycle.opened('slack', () => slack.stop());
    return { port, stopSlack: () => slack.stop() };
  }

  // Without the HTTP receiver, the probes get a server of their own on PORT.
  const server = await listen(() => startRouteServer(probes, config.PORT, host));
  lifecycle.opened('probes', () => server.close());
  if (web && input.listener) {
    const custom = await input.listener(deps, slackSettings);
    lifecycle.opened('slack', () => custom.stop());
    return { port: server.port, stopSlack: () => custom.stop() };
  }
  if (!socketMode) return { port: server.port, stopSlack: undefined };
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
  return { port: server.port, stopSlack: () => slack.stop() };
}
