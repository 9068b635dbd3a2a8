import { randomBytes } from 'node:crypto';
import { WebClient } from '@slack/web-api';
import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { inject } from 'vitest';
import {
  createInfraClient,
  createPlatformClient,
  type InfraClient,
  type PlatformClient,
} from '../../src/cloud/index.js';
import { ROUTES } from '../../src/cloud/routes.js';
import type { Shape } from '../../src/cloud/shape.js';
import { staticToken } from '../../src/cloud/token-provider.js';
import { auditLine } from '../../src/commands/audit/render.js';
import { gpuCommandSchema } from '../../src/commands/registry.js';
import { FakeSlackApi, type FakeSlackOptions } from '../../src/devkit/fake-slack-api.js';
import { createHomePublisher } from '../../src/home/publish-home.js';
import { scheduleApprovalExpiry } from '../../src/jobs/guardrail-jobs.js';
import { createQueue, type GpuQueue } from '../../src/jobs/queue.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { createMetricCatalog } from '../../src/metrics/catalog.js';
import { createMetricsClient } from '../../src/metrics/metrics-client.js';
import { type BotMetrics, createBotMetrics } from '../../src/obs/bot-metrics.js';
import type { Guardrails } from '../../src/policy/guardrails.js';
import { DEFAULT_POLICY, type Policy } from '../../src/policy/policy.js';
import { submitPolicyAction } from '../../src/requests/policy-action.js';
import { submitScheduledAction } from '../../src/requests/scheduled-action.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { createSlackWeb, type SlackWeb } from '../../src/slack/create-slack-app.js';
import { ConversationPacedWebClient } from '../../src/slack/paced-web-client.js';
import { slackRequestPorts } from '../../src/slack/request-ports.js';
import type { SnapshotDeps } from '../../src/snapshot/take-snapshot.js';
import { createApprovals } from '../../src/store/approvals.js';
import { createAudit } from '../../src/store/audit.js';
import { createLeases } from '../../src/store/leases.js';
import { createSealer, type Sealer } from '../../src/store/sealed.js';
import { createStore, type Store } from '../../src/store/store.js';
import { findChartFonts } from '../../src/sys/fonts.js';
import { createWatchWorker } from '../../src/watch/create-watch-worker.js';
import { watchScheduleTimers } from '../../src/watch/schedule-timers.js';
import type { WatchDeps } from '../../src/watch/watch-deps.js';
import { createWatchQueue, scheduleWatchers, type WatchQueue } from '../../src/watch/watch-queue.js';
import { createWorker } from '../../src/workers/create-worker.js';
import type { WorkerDeps } from '../../src/workers/worker-deps.js';
import { OPEN_TEST_POLICY } from './guardrails.js';
import {
  DEFAULTS,
  interactionBody,
  postSigned,
  ResponseUrlServer,
  type SignedResponse,
  slashCommandBody,
} from './slack-driver.js';

// The whole bot on one machine for end-to-end tests: the simulator over real HTTP, the fake Slack Web
// API driven by the real SDK, a real Redis with a queue and key prefix of this stack's own, real
// BullMQ workers, and the Bolt app receiving requests signed as Slack signs them.

export const SIGNING_SECRET = 'test-signing-secret';
export const BOT_TOKEN = 'xoxb-test';
/** The key form secrets are sealed with in tests (GPUOPS_SEAL_KEY in production). */
export const TEST_SEAL_KEY = Buffer.alloc(32, 7);

export interface BotStackOptions {
  readonly shape?: Shape;
  /** Simulator transition time; short so tests stay quick. */
  readonly transitionMs?: number;
  readonly workers?: number;
  readonly slack?: FakeSlackOptions;
  readonly lockDurationMs?: number;
  /**
   * Start the simulator's metrics side (a real Prometheus) and give the workers `snapshots` built from
   * it, as the composition root does when METRICS_* is set. Default false: `/gpu metrics` then says
   * metrics are not configured.
   */
  readonly metrics?: boolean;
  /** Keep every log line (debug and up) in `logLines`, to check what never reaches a log. */
  readonly captureLogs?: boolean;
  /**
   * The policy of the guardrails (roles, approvals, leases, audit), which are always on as in
   * production. Default OPEN_TEST_POLICY: every request runs at once and is still audited, for tests
   * of features other than the guardrails.
   */
  readonly policy?: Policy;
  /** How often the approval expiry runs when `policy` is set; default 200 ms. */
  readonly approvalExpiryEveryMs?: number;
  /** Run the watchers: `/gpu watch`, idle alerts, digests, the waitlist (docs/watch.md). */
  readonly watch?: WatchStackOptions;
}

/** The watchers in a stack (docs/watch.md): short intervals so tests wait for events, not minutes. */
export interface WatchStackOptions {
  /** Watch workers on the one watch queue, as replicas would run them; default 1. */
  readonly replicas?: number;
  /** The watchers' policy (idle, digest, intervals); default the stack's `policy`, else the defaults. */
  readonly policy?: Policy;
  /** Start the job schedulers; default true. Off, a test runs the processors itself. */
  readonly schedulers?: boolean;
  /** Scheduler periods; defaults 200 ms (poll), 500 ms (idle), 200 ms (capacity). */
  readonly pollEveryMs?: number;
  readonly idleEveryMs?: number;
  readonly capacityEveryMs?: number;
  /** Least time between two Slack calls to one channel; default 5 ms (Slack's is about 1 s). */
  readonly minIntervalMs?: number;
}

export interface WatchStack {
  readonly queue: WatchQueue;
  /** What the watch workers run with: call the processors directly with it. */
  readonly deps: WatchDeps;
  readonly workers: readonly Worker[];
}

export interface BotStack {
  readonly shape: Shape;
  readonly sim: RunningSim;
  readonly slack: FakeSlackApi;
  readonly responses: ResponseUrlServer;
  readonly queue: GpuQueue;
  readonly store: Store;
  readonly cloud: InfraClient;
  readonly platform: PlatformClient;
  readonly url: string;
  readonly redis: Redis;
  readonly log: Logger;
  /** The queue prefix and store prefix of this stack, for workers started in other processes. */
  readonly queuePrefix: string;
  readonly storePrefix: string;
  /** Log lines written so far when `captureLogs` is on (JSON strings), else empty. */
  readonly logLines: string[];
  /** What `/gpu metrics` draws with, when `metrics` is on. */
  readonly snapshots: SnapshotDeps | undefined;
  /** Seals form secrets for the listener and unseals them for the workers (TEST_SEAL_KEY). */
  readonly sealer: Sealer;
  /** The guardrails when `policy` is set: its approvals, audit trail and leases. */
  readonly guardrails: Guardrails;
  /** The bot's metrics registry (approvals by outcome are counted here when `policy` is set). */
  readonly metrics: BotMetrics;
  /** The watchers, when `watch` is set. */
  readonly watch: WatchStack | undefined;
  /** Sends `/gpu <text>` as Slack would; returns Bolt's answer and the response_url it was given. */
  command(
    text: string,
    options?: { userId?: string; userName?: string; channelId?: string; triggerId?: string },
  ): Promise<{
    response: SignedResponse;
    responseUrl: string;
  }>;
  /** Sends an interaction payload (view_submission, block_actions) signed as Slack does. */
  interact(payload: Readonly<Record<string, unknown>>): Promise<SignedResponse>;
  /** Waits until the queue holds no waiting, active or delayed job. */
  drained(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The fonts charts are drawn with here, as the composition root finds them. */
function chartFonts(): { fontFiles: readonly string[]; fontFamily: string } {
  const fonts = findChartFonts();
  return { fontFiles: fonts.files, fontFamily: fonts.family };
}

export async function startBotStack(options: BotStackOptions = {}): Promise<BotStack> {
  const shape = options.shape ?? 'B';
  const id = randomBytes(4).toString('hex');
  const sim = await startSim({
    shape,
    port: 0,
    metrics: options.metrics ?? false,
    transitionMs: options.transitionMs ?? 300,
    log: () => {},
  });
  const slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN], ...options.slack });
  const responses = await ResponseUrlServer.start();
  const redisUrl = inject('redisUrl');
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const queueConnection = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  const workerConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const prefix = `{t${id}}`;
  const store = createStore(redis, `t${id}`);
  const queue = createQueue(queueConnection, prefix);
  // As the composition root does: the watchers' queue also carries the power schedules' timers.
  const watchQueue = createWatchQueue(queueConnection, prefix);
  const sealer = createSealer(redis, `t${id}`, TEST_SEAL_KEY);
  const logLines: string[] = [];
  const log = options.captureLogs
    ? createLogger({ level: 'debug', destination: { write: (line: string) => logLines.push(line) } })
    : createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  let snapshots: SnapshotDeps | undefined;
  if (options.metrics) {
    if (!sim.info.metricsAvailable) throw new Error(`simulator metrics unavailable: ${sim.info.metricsNote}`);
    const fonts = findChartFonts();
    snapshots = {
      client: createMetricsClient({
        baseUrl: sim.info.metricsUrl,
        tokens: staticToken(sim.info.metricsApiKey),
      }),
      catalog: createMetricCatalog(),
      fonts: { fontFiles: fonts.files, fontFamily: fonts.family },
    };
  }
  const cloud = createInfraClient({
    baseUrl: sim.info.cloudUrl,
    shape,
    tokens: staticToken(sim.info.cloudToken),
    projectId: sim.info.projectId,
  });
  const platform = createPlatformClient({ baseUrl: sim.info.platformUrl, apiKey: sim.info.platformApiKey });
  const metrics = createBotMetrics({ defaultMetrics: false });
  const policy = options.policy ?? OPEN_TEST_POLICY;
  const guardrails: Guardrails = {
    policy,
    approvals: createApprovals(redis, { prefix: `t${id}`, command: gpuCommandSchema }),
    audit: createAudit(redis, {
      prefix: `t${id}`,
      retentionSeconds: policy.audit.retentionSeconds,
      log,
      // As the composition root does: each entry also posted to the policy's audit channel.
      ...(policy.audit.channel
        ? {
            publish: (entry) =>
              slackClient.chat.postMessage({
                channel: policy.audit.channel!,
                text: auditLine(entry),
              }),
          }
        : {}),
    }),
    leases: createLeases(redis, { prefix: `t${id}` }),
    onApproval: (outcome) => metrics.countApproval(outcome),
  };
  // As the composition root builds it: a 429 waits for its conversation only.
  const slackClient = new ConversationPacedWebClient(BOT_TOKEN, {
    slackApiUrl: slack.apiUrl,
    retryConfig: { retries: 2 },
  });
  const deps: WorkerDeps = {
    cloud,
    platform,
    snapshots,
    slack: slackClient,
    store,
    log,
    shape,
    defaultProjectId: sim.info.projectId,
    sealer,
    schedules: watchScheduleTimers(watchQueue),
    respond: async (url, body) => {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.body.dump();
    },
    timing: { pollStartMs: 50, pollMaxMs: 200, settleTimeoutMs: 20_000 },
    guardrails,
    queue,
  };
  const workers = Array.from({ length: options.workers ?? 1 }, () =>
    createWorker(workerConnection, deps, {
      prefix,
      concurrency: 4,
      lockDurationMs: options.lockDurationMs ?? 5_000,
    }),
  );
  const web: SlackWeb = createSlackWeb(
    {
      botToken: BOT_TOKEN,
      signingSecret: SIGNING_SECRET,
      slackApiUrl: slack.apiUrl,
      botId: 'B0BOT',
      botUserId: 'U0BOT',
    },
    {
      queue,
      store,
      log,
      shape,
      routes: ROUTES[shape],
      defaultProjectId: sim.info.projectId,
      sealer,
      guardrails,
      // As auth.test tells the composition root: the workspace the driver's requests come from.
      botTeamId: DEFAULTS.teamId,
      homeFonts: chartFonts(),
    },
  );
  // Only tests of the guardrails get the expiry's scheduler job: the others count the queue's jobs.
  if (options.policy) await scheduleApprovalExpiry(queue, { everyMs: options.approvalExpiryEveryMs ?? 200 });
  let watch: WatchStack | undefined;
  if (options.watch) {
    const w = options.watch;
    const watchPolicy = w.policy ?? options.policy ?? DEFAULT_POLICY;
    const acceptDeps = {
      queue,
      store,
      log,
      guardrails,
      ports: slackRequestPorts({ client: slackClient, store, log }),
    };
    const watchDeps: WatchDeps = {
      cloud,
      platform,
      // As the composition root builds it: a 429 reaches the drain, which honours Retry-After itself.
      slack: new WebClient(BOT_TOKEN, {
        slackApiUrl: slack.apiUrl,
        rejectRateLimitedCalls: true,
        retryConfig: { retries: 2 },
      }),
      store,
      log,
      policy: watchPolicy,
      shape,
      queue: watchQueue,
      snapshots,
      minIntervalMs: w.minIntervalMs ?? 5,
      // As the composition root wires it: what the policy decides becomes an audited job.
      submit: (action) => submitPolicyAction(acceptDeps, action),
      submitScheduled: (action) => submitScheduledAction(acceptDeps, action),
      botUserId: 'U0BOT',
      // As the composition root wires it: Home tabs re-published when someone's machines change.
      home: createHomePublisher({
        store,
        client: slackClient,
        log,
        policy: guardrails.policy,
        approvals: guardrails.approvals,
        leases: guardrails.leases,
        groupsOf: slackRequestPorts({ client: slackClient, store, log }).groupsOf,
        shape,
        routes: ROUTES[shape],
        defaultProjectId: sim.info.projectId,
        fonts: chartFonts(),
      }),
    };
    const watchWorkers = Array.from({ length: w.replicas ?? 1 }, () =>
      createWatchWorker(workerConnection, watchDeps, { prefix, concurrency: 8, lockDurationMs: 10_000 }),
    );
    if (w.schedulers ?? true) {
      await scheduleWatchers(watchQueue, watchPolicy, {
        pollEveryMs: w.pollEveryMs ?? 200,
        idleEveryMs: w.idleEveryMs ?? 500,
        capacityEveryMs: w.capacityEveryMs ?? 200,
      });
    }
    watch = { queue: watchQueue, deps: watchDeps, workers: watchWorkers };
  }
  const port = await web.start(0, '127.0.0.1');
  const url = `http://127.0.0.1:${port}/slack/events`;

  return {
    shape,
    sim,
    slack,
    responses,
    queue,
    store,
    cloud,
    platform,
    url,
    redis,
    log,
    queuePrefix: prefix,
    storePrefix: `t${id}`,
    logLines,
    snapshots,
    sealer,
    guardrails,
    metrics,
    watch,
    async command(text, opts = {}) {
      const responseUrl = responses.newUrl();
      const body = slashCommandBody({ text, responseUrl, ...opts });
      const response = await postSigned(url, body, { secret: SIGNING_SECRET });
      return { response, responseUrl };
    },
    interact(payload) {
      return postSigned(url, interactionBody(payload), { secret: SIGNING_SECRET });
    },
    async drained(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const counts = await queue.getJobCounts(
          'waiting',
          'active',
          'delayed',
          'prioritized',
          'waiting-children',
        );
        if (Object.values(counts).every((n) => n === 0)) return;
        if (Date.now() > deadline) throw new Error(`queue not drained: ${JSON.stringify(counts)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      await web.stop();
      await Promise.all(workers.map((w) => w.close()));
      if (watch) await Promise.all(watch.workers.map((w) => w.close()));
      await watchQueue.obliterate({ force: true }).catch(() => {});
      await watchQueue.close();
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close();
      const keys = await redis.keys(`t${id}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      queueConnection.disconnect();
      workerConnection.disconnect();
      await cloud.close();
      await platform.close();
      await responses.close();
      await slack.close();
      await sim.close();
    },
  };
}
