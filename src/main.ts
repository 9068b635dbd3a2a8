import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebClient, type WebClientOptions } from '@slack/web-api';
import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { request } from 'undici';
import {
  clientCredentials,
  createInfraClient,
  createPlatformClient,
  type InfraClient,
  type PlatformClient,
  parseRouteOverrides,
  resolveRoutes,
  staticToken,
  type TokenProvider,
} from './cloud/index.js';
import { auditLine } from './commands/approvals/render.js';
import type { WorkerTiming } from './commands/kit/handler-deps.js';
import { gpuCommandSchema } from './commands/registry.js';
import { type Config, ConfigError, parseConfig, type Role } from './config.js';
import { AppError, ErrorCode } from './errors.js';
import { scheduleApprovalExpiry } from './jobs/guardrail-jobs.js';
import type { JobData } from './jobs/job-data.js';
import { createQueue, type GpuQueue } from './jobs/queue.js';
import { scheduleCatalogRefresh } from './jobs/system-jobs.js';
import { createLogger, type Logger, redactText } from './log/logger.js';
import { createMetricCatalog, parseSeriesOverrides } from './metrics/catalog.js';
import { metricsTokenProvider } from './metrics/metrics-auth.js';
import { createMetricsClient } from './metrics/metrics-client.js';
import { type BotMetrics, createBotMetrics } from './obs/bot-metrics.js';
import { countSlackErrors } from './obs/count-slack-errors.js';
import { healthRoutes } from './obs/health-routes.js';
import { type RouteServer, startRouteServer } from './obs/route-server.js';
import type { Guardrails } from './policy/guardrails.js';
import { loadPolicy } from './policy/load-policy.js';
import { createSlackSocket, createSlackWeb, type SlackClientOptions } from './slack/create-slack-app.js';
import type { SlackDeps } from './slack/slack-deps.js';
import type { SnapshotDeps } from './snapshot/take-snapshot.js';
import { createApprovals } from './store/approvals.js';
import { createAudit } from './store/audit.js';
import { createLeases } from './store/leases.js';
import { createSealer, sealKeyFrom } from './store/sealed.js';
import { createStore } from './store/store.js';
import { findChartFonts } from './sys/fonts.js';
import { createWatchWorker } from './watch/create-watch-worker.js';
import { createWatchQueue, scheduleWatchers } from './watch/watch-queue.js';
import { createWorker } from './workers/create-worker.js';
import type { WorkerDeps } from './workers/worker-deps.js';

// The composition root: the one place that reads the configuration into clients, connections and
// roles. `gpuops start` runs the role of ROLE (default all: listener and workers in one process);
// `gpuops web` and `gpuops worker` force theirs. See docs/operations.md.

export interface BotOptions {
  /** Which role to run; default config.ROLE. */
  readonly role?: Role;
  readonly log?: Logger;
  /** Interface the HTTP server binds; default 0.0.0.0. */
  readonly host?: string;
  /** How long SIGTERM waits for jobs in hand before releasing them to other workers; default 20 s. */
  readonly shutdownGraceMs?: number;
  readonly lockDurationMs?: number;
  readonly stalledIntervalMs?: number;
  readonly workerTiming?: Partial<WorkerTiming>;
  readonly workerConcurrency?: number;
  /** Limit for reaching Redis and Slack at start; default 10 s. */
  readonly startTimeoutMs?: number;
  /**
   * Runs the listeners on a receiver of the caller's instead of HTTP or Socket Mode: `gpuops demo`'s
   * terminal chat. /healthz, /readyz and /metrics are then served on PORT as in Socket Mode.
   */
  readonly listener?: ListenerFactory;
}

/** What a custom listener gets: the listeners' deps and the Slack settings every receiver uses. */
export type ListenerFactory = (
  deps: Omit<SlackDeps, 'client'>,
  slack: {
    readonly botToken: string;
    readonly slackApiUrl: string;
    readonly botId: string | undefined;
    readonly botUserId: string;
    readonly clientOptions: SlackClientOptions;
  },
) => Promise<{ stop(): Promise<void> }>;

export interface RunningBot {
  readonly role: Role;
  /** Port of the HTTP server (/slack/events in HTTP mode, /healthz, /readyz, /metrics). */
  readonly port: number;
  readonly metrics: BotMetrics;
  readonly botUserId: string;
  /** What SIGTERM does: stop taking requests and jobs, finish or release jobs in hand, close everything. */
  stop(): Promise<void>;
}

export const DEFAULT_SHUTDOWN_GRACE_MS = 20_000;
/** After the grace period, how long released jobs get to unwind before the connections close anyway. */
const RELEASE_WAIT_MS = 5_000;
const DEFAULT_START_TIMEOUT_MS = 10_000;

/** A start-up failure with the sentence to print: what, why, how to fix. */
export class StartError extends AppError {
  constructor(message: string, cause?: unknown) {
    super(ErrorCode.Config, message, cause === undefined ? undefined : { cause });
  }
}

async function within<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(onTimeout()), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** What differs between the three Redis connections. */
interface ConnectionBehaviour {
  readonly maxRetriesPerRequest: number | null;
  readonly enableOfflineQueue?: boolean;
  readonly commandTimeout?: number;
}

/** The Redis URL without user or password, for messages. */
export function safeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return 'REDIS_URL';
  }
}

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

const TOKEN_REFUSED = new Set([
  'invalid_auth',
  'not_authed',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'not_allowed_token_type',
]);

/** auth.test once, with no retries: a wrong token stops the start with a sentence saying which. */
async function checkBotToken(
  config: Config,
  timeoutMs: number,
): Promise<{ botUserId: string; botId: string | undefined }> {
  const probe = new WebClient(config.SLACK_BOT_TOKEN, {
    slackApiUrl: config.SLACK_API_URL,
    retryConfig: { retries: 0 },
    timeout: timeoutMs,
  });
  try {
    const res = await within(
      probe.auth.test(),
      timeoutMs + 1_000,
      () => new Error(`no answer within ${timeoutMs} ms`),
    );
    if (!res.user_id) throw new StartError('Slack auth.test gave no user id for SLACK_BOT_TOKEN.');
    return { botUserId: res.user_id, botId: res.bot_id };
  } catch (err) {
    if (err instanceof StartError) throw err;
    const code = (err as { data?: { error?: string } }).data?.error;
    if (code && TOKEN_REFUSED.has(code)) {
      throw new StartError(
        `Slack refused SLACK_BOT_TOKEN (${code}): copy the Bot User OAuth Token (xoxb-…) from the Slack app's OAuth & Permissions page.`,
        err,
      );
    }
    if (code) throw new StartError(`Slack answered auth.test with "${code}" for SLACK_BOT_TOKEN.`, err);
    const why = redactText((err as Error)?.message ?? String(err));
    throw new StartError(
      `Could not reach the Slack Web API at ${config.SLACK_API_URL} (${why}): check SLACK_API_URL and the network.`,
      err,
    );
  }
}

export async function startBot(config: Config, options: BotOptions = {}): Promise<RunningBot> {
  const role = options.role ?? config.ROLE;
  const web = role !== 'worker';
  const working = role !== 'web';
  const socketMode = web && config.SLACK_SOCKET_MODE;
  const log = options.log ?? createLogger({ level: config.LOG_LEVEL });
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  const metrics = createBotMetrics({
    info: { role, shape: config.CLOUD_API_SHAPE, mode: socketMode ? 'socket' : 'http' },
  });
  let shuttingDown = false;
  // What start-up opened so far, closed in reverse on failure or stop.
  const closers: Array<{ what: string; close: () => Promise<unknown> }> = [];
  const closeAll = async () => {
    for (const { what, close } of closers.splice(0).reverse()) {
      try {
        await within(close(), 5_000, () => new Error('timed out'));
      } catch (err) {
        log.warn({ err, what }, 'could not close cleanly');
      }
    }
  };

  try {
    // --- Policy: an invalid file stops the start with its line and rule (docs/policy.md) ------------
    const policy = await loadPolicy(config.GPUOPS_POLICY);
    log.info({ policy: policy.source }, 'policy loaded');

    // --- Redis: three connections with the behaviour each user needs -------------------------------
    const redisUrl = config.REDIS_URL;
    const connect = async (name: string, extra: ConnectionBehaviour): Promise<Redis> => {
      const redis = new Redis(redisUrl, { lazyConnect: true, connectionName: `gpuops-${name}`, ...extra });
      let down = false;
      redis.on('error', (err) => {
        // ioredis retries forever and reports each try: say it once per outage.
        if (down) return;
        down = true;
        log.warn({ err, connection: name }, 'Redis connection lost; retrying');
      });
      redis.on('ready', () => {
        if (down) log.info({ connection: name }, 'Redis connection back');
        down = false;
      });
      closers.push({
        what: `redis ${name}`,
        close: async () => {
          await within(redis.quit(), 1_000, () => new Error('quit timed out')).catch(() => {});
          redis.disconnect();
        },
      });
      try {
        await within(
          redis.connect(),
          startTimeoutMs,
          () => new Error(`no answer within ${startTimeoutMs} ms`),
        );
      } catch (err) {
        throw new StartError(
          `Could not reach Redis at ${safeRedisUrl(redisUrl)} (${redactText((err as Error).message)}): check REDIS_URL and that Redis is running.`,
          err,
        );
      }
      return redis;
    };
    // The store and the queue fail fast when Redis is away, so the listener can still answer in time.
    const storeRedis = await connect('store', {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      commandTimeout: 2_000,
    });
    const queueRedis = await connect('queue', {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      commandTimeout: 2_000,
    });
    const store = createStore(storeRedis);
    // Form secrets (user data, kubeconfigs) travel sealed in Redis, never in job data.
    const sealer = createSealer(storeRedis, store.prefix, sealKeyFrom(config));
    const queue: GpuQueue = createQueue(queueRedis);
    queue.on('error', () => {}); // the connection's own listener above reports it
    closers.push({ what: 'queue', close: () => queue.close() });
    metrics.watchQueue(() => queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized'));

    // --- Slack ---------------------------------------------------------------------------------------
    const { botUserId, botId } = await checkBotToken(config, startTimeoutMs);
    const slackFetch = countSlackErrors((method, error) => metrics.slackApiError(method, error));

    // --- Guardrails: roles, approvals, leases and the audit trail, shared by listener and workers ----
    const auditChannel = policy.audit.channel;
    const auditSlack = auditChannel
      ? new WebClient(config.SLACK_BOT_TOKEN, { slackApiUrl: config.SLACK_API_URL, fetch: slackFetch })
      : undefined;
    const guardrails: Guardrails = {
      policy,
      approvals: createApprovals(storeRedis, { prefix: store.prefix, command: gpuCommandSchema }),
      audit: createAudit(storeRedis, {
        prefix: store.prefix,
        retentionSeconds: policy.audit.retentionSeconds,
        log,
        ...(auditChannel && auditSlack
          ? {
              publish: (entry) =>
                auditSlack.chat.postMessage({ channel: auditChannel, text: auditLine(entry) }),
            }
          : {}),
      }),
      leases: createLeases(storeRedis, { prefix: store.prefix }),
      onApproval: (outcome) => metrics.countApproval(outcome),
    };

    // --- Cloud: only where jobs run; the listener never calls it ---------------------------------------
    const routes = resolveRoutes(
      config.CLOUD_API_SHAPE,
      parseRouteOverrides(config.CLOUD_ROUTES, (path) => readFileSync(path, 'utf8')),
    );

    let worker: Worker<JobData> | undefined;
    if (working) {
      const cloud: InfraClient = createInfraClient({
        baseUrl: config.CLOUD_API_URL!,
        shape: config.CLOUD_API_SHAPE,
        tokens: cloudTokens(config),
        projectId: config.CLOUD_PROJECT_ID,
        orgId: config.CLOUD_ORG_ID,
        routes,
        timeoutMs: config.CLOUD_TIMEOUT_MS,
        onCall: (e) => metrics.cloudCall({ api: 'infra', ...e }),
      });
      closers.push({ what: 'cloud client', close: () => cloud.close() });
      let platform: PlatformClient | undefined;
      if (config.PLATFORM_API_URL && config.PLATFORM_API_KEY) {
        const client = createPlatformClient({
          baseUrl: config.PLATFORM_API_URL,
          apiKey: config.PLATFORM_API_KEY,
          timeoutMs: config.CLOUD_TIMEOUT_MS,
          onCall: (e) => metrics.cloudCall({ api: 'platform', ...e }),
        });
        closers.push({ what: 'platform client', close: () => client.close() });
        platform = client;
      }
      const slackOptions: WebClientOptions = {
        slackApiUrl: config.SLACK_API_URL,
        fetch: slackFetch,
        timeout: 15_000,
        // A job waits out a Slack hiccup, but not Slack's default half hour.
        retryConfig: { retries: 5, factor: 2, minTimeout: 500, maxTimeout: 10_000 },
      };
      const deps: WorkerDeps = {
        cloud,
        platform,
        snapshots: snapshotDeps(config, log),
        slack: new WebClient(config.SLACK_BOT_TOKEN, slackOptions),
        store,
        log,
        shape: config.CLOUD_API_SHAPE,
        defaultProjectId: config.CLOUD_PROJECT_ID,
        respond: (url, body) => respondTo(url, body, log),
        sealer,
        guardrails,
        queue,
        ...(options.workerTiming ? { timing: options.workerTiming } : {}),
      };
      // BullMQ's blocking commands need a connection that never gives up on a request.
      const workerRedis = await connect('worker', { maxRetriesPerRequest: null });
      const w = createWorker(workerRedis, deps, {
        ...(options.lockDurationMs !== undefined ? { lockDurationMs: options.lockDurationMs } : {}),
        ...(options.stalledIntervalMs !== undefined ? { stalledIntervalMs: options.stalledIntervalMs } : {}),
        ...(options.workerConcurrency !== undefined ? { concurrency: options.workerConcurrency } : {}),
      });
      w.on('completed', (job) =>
        metrics.jobEnded(job.name, 'done', Date.now() - (job.processedOn ?? Date.now())),
      );
      w.on('failed', (job) => {
        if (!job) return;
        const outcome = job.finishedOn ? 'failed' : 'retried';
        metrics.jobEnded(job.name, outcome, Date.now() - (job.processedOn ?? Date.now()));
      });
      worker = w;
      // On failure before the end of start-up; stop() drains it with the grace period instead.
      closers.push({ what: 'worker', close: () => w.close(true) });
      // A BullMQ job scheduler: fires once per period however many workers run; upserting is idempotent.
      await scheduleCatalogRefresh(queue, {
        ...(config.CLOUD_PROJECT_ID ? { projectId: config.CLOUD_PROJECT_ID } : {}),
      }).catch((err: unknown) =>
        log.warn({ err }, 'could not schedule the catalogue refresh; modals load on demand'),
      );
      // Closes approval requests whose time is up, once a minute across every worker.
      await scheduleApprovalExpiry(queue).catch((err: unknown) =>
        log.warn({ err }, 'could not schedule the approval expiry; expired cards close on their next click'),
      );
      // --- Watchers: state changes, idle GPUs, digests, the capacity waitlist (docs/watch.md) ---------
      // Their own queue, so frequent looks and rate-limited posting never hold up a person's request.
      const watchQueue = createWatchQueue(queueRedis);
      watchQueue.on('error', () => {}); // the connection's own listener reports it
      closers.push({ what: 'watch queue', close: () => watchQueue.close() });
      const watchWorker = createWatchWorker(workerRedis, {
        cloud,
        // A 429 reaches the outbox drain, which waits out Retry-After without holding a worker.
        slack: new WebClient(config.SLACK_BOT_TOKEN, { ...slackOptions, rejectRateLimitedCalls: true }),
        store,
        log,
        policy,
        shape: config.CLOUD_API_SHAPE,
        queue: watchQueue,
        snapshots: deps.snapshots,
      });
      closers.push({ what: 'watch worker', close: () => watchWorker.close() });
      await scheduleWatchers(watchQueue, policy).catch((err: unknown) =>
        log.warn({ err }, 'could not schedule the watchers; /gpu watch posts nothing until they are'),
      );
    }

    // --- HTTP and Slack receivers --------------------------------------------------------------------
    const probes = healthRoutes({
      redisPing: () => storeRedis.ping(),
      queueCheck: () => queue.getJobCounts('active'),
      metrics,
      shuttingDown: () => shuttingDown,
    });
    const host = options.host ?? '0.0.0.0';
    const listenerClient: SlackClientOptions = {
      fetch: slackFetch,
      // Within Slack's three seconds: one quick retry, then the listener answers on its own.
      retryConfig: { retries: 1, minTimeout: 200, maxTimeout: 500 },
      timeout: 2_500,
    };
    const slackDeps: Omit<SlackDeps, 'client'> = {
      queue,
      store,
      log,
      shape: config.CLOUD_API_SHAPE,
      routes,
      defaultProjectId: config.CLOUD_PROJECT_ID,
      sealer,
      onCommand: (kind) => metrics.commandReceived(kind),
      guardrails,
    };
    let port: number;
    let stopSlack: (() => Promise<void>) | undefined;
    let routeServer: RouteServer | undefined;
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
    if (web && !socketMode && !options.listener) {
      const slack = createSlackWeb(
        {
          botToken: config.SLACK_BOT_TOKEN!,
          signingSecret: config.SLACK_SIGNING_SECRET!,
          slackApiUrl: config.SLACK_API_URL,
          botId,
          botUserId,
          routes: probes,
          clientOptions: listenerClient,
        },
        slackDeps,
      );
      port = await listen(() => slack.start(config.PORT, host));
      stopSlack = () => slack.stop();
      closers.push({ what: 'slack', close: () => slack.stop() });
    } else {
      routeServer = await listen(() => startRouteServer(probes, config.PORT, host));
      const server = routeServer;
      closers.push({ what: 'probes', close: () => server.close() });
      port = routeServer.port;
      if (web && options.listener) {
        const custom = await options.listener(slackDeps, {
          botToken: config.SLACK_BOT_TOKEN!,
          slackApiUrl: config.SLACK_API_URL,
          botId,
          botUserId,
          clientOptions: listenerClient,
        });
        closers.push({ what: 'slack', close: () => custom.stop() });
        stopSlack = () => custom.stop();
      } else if (socketMode) {
        const slack = createSlackSocket(
          {
            botToken: config.SLACK_BOT_TOKEN!,
            appToken: config.SLACK_APP_TOKEN!,
            slackApiUrl: config.SLACK_API_URL,
            botId,
            botUserId,
            clientOptions: listenerClient,
          },
          slackDeps,
        );
        closers.push({ what: 'slack', close: () => slack.stop() });
        try {
          await within(
            slack.start(),
            startTimeoutMs,
            () => new Error(`Slack did not open the connection within ${startTimeoutMs} ms`),
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
        stopSlack = () => slack.stop();
      }
    }

    log.info({ role, port, socketMode, shape: config.CLOUD_API_SHAPE }, 'gpuops ready');

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        shuttingDown = true;
        log.info({ role }, 'stopping: no new requests or jobs');
        if (stopSlack) {
          await stopSlack().catch((err: unknown) => log.warn({ err }, 'could not stop the Slack receiver'));
        }
        if (worker) await drain(worker, graceMs, log);
        // The rest in reverse order of opening: probes, cloud clients, queue, Redis.
        const rest = closers.filter((c) => c.what !== 'slack' && c.what !== 'worker');
        closers.splice(0, closers.length, ...rest);
        await closeAll();
        log.info({ role }, 'stopped');
      })();
      return stopping;
    };
    return { role, port, metrics, botUserId, stop };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/**
 * Stops taking jobs and waits for the ones in hand. After the grace period the jobs still running are
 * cancelled: their handlers stop at the next step, BullMQ counts the attempt and schedules the job
 * again, and another worker (or this one after a restart) resumes it from its saved progress.
 */
async function drain(worker: Worker<JobData>, graceMs: number, log: Logger): Promise<void> {
  const closing = worker.close().then(
    () => true,
    (err: unknown) => {
      log.warn({ err }, 'worker did not close cleanly');
      return true;
    },
  );
  const timeUp = (ms: number) => sleep(ms, false, { ref: false });
  if (await Promise.race([closing, timeUp(graceMs)])) return;
  log.warn({ graceMs }, 'jobs still running after the grace period: releasing them to other workers');
  worker.cancelAllJobs('gpuops is shutting down; the job continues on another worker');
  if (await Promise.race([closing, timeUp(RELEASE_WAIT_MS)])) return;
  // Still busy: its lock expires and BullMQ's stalled-job check hands the job to another worker.
  log.warn('a job did not stop in time: its lock will expire and another worker takes it over');
}

/**
 * Answers on a Slack response_url (ephemeral replies replaced in place). A refused answer (the URL
 * expired after 30 minutes or 5 uses) is logged, not retried: sending it again cannot help.
 */
async function respondTo(url: string, body: Record<string, unknown>, log: Logger): Promise<void> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  await res.body.dump();
  if (res.statusCode >= 400) {
    log.warn({ status: res.statusCode }, 'Slack refused an answer on a response_url (expired or used up)');
  }
}

/**
 * `gpuops start|web|worker`: reads the environment, runs the role until SIGTERM or SIGINT, and
 * returns the exit code. A second signal exits at once.
 */
export async function runBot(
  forcedRole: Role | undefined,
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const command = forcedRole ?? 'start';
  let config: Config;
  try {
    config = parseConfig(forcedRole ? { ...env, ROLE: forcedRole } : env, 'bot');
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`gpuops ${command}: ${err.message}\nSee .env.example for every setting.\n`);
      return 1;
    }
    throw err;
  }
  const log = createLogger({ level: config.LOG_LEVEL });
  let bot: RunningBot;
  try {
    bot = await startBot(config, { log });
  } catch (err) {
    const message =
      err instanceof AppError ? err.message : redactText((err as Error)?.message ?? String(err));
    log.fatal({ err }, 'gpuops could not start');
    log.flush();
    process.stderr.write(`gpuops ${command}: ${message}\n`);
    return 1;
  }
  return new Promise<number>((resolve) => {
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        log.warn({ signal }, 'second signal: exiting now');
        log.flush();
        process.exit(1);
      }
      signalled = true;
      log.info({ signal }, 'signal received: shutting down (send it again to exit at once)');
      bot.stop().then(
        () => finish(0),
        (err: unknown) => {
          log.error({ err }, 'shutdown failed');
          finish(1);
        },
      );
    };
    const finish = (code: number) => {
      log.flush();
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('SIGINT', onSignal);
      // Exit on our own once everything is closed; a handle some library left open must not hold it.
      setTimeout(() => process.exit(code), 500).unref();
      resolve(code);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // A stray rejection in some library's background work is logged, not a crash of every job in hand.
    process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled promise rejection'));
  });
}
