import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { type BotOptions, type RunningBot, startBot } from '../../src/app/start-bot.js';
import {
  createInfraClient,
  createPlatformClient,
  type InfraClient,
  type PlatformClient,
} from '../../src/cloud/index.js';
import type { Shape } from '../../src/cloud/shape.js';
import { staticToken } from '../../src/cloud/token-provider.js';
import { parseConfig } from '../../src/config.js';
import { FakeSlackApi, type FakeSlackOptions, type RecordedCall } from '../../src/devkit/fake-slack-api.js';
import { type GpuQueue, QUEUE_PREFIX } from '../../src/jobs/queue.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import type { BotMetrics } from '../../src/obs/bot-metrics.js';
import type { Guardrails } from '../../src/policy/guardrails.js';
import type { Policy } from '../../src/policy/policy.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import type { SnapshotDeps } from '../../src/snapshot/take-snapshot.js';
import type { Sealer } from '../../src/store/sealed.js';
import type { Store } from '../../src/store/store.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/sys/private-redis.js';
import type { WatchDeps } from '../../src/watch/watch-deps.js';
import type { WatchQueue } from '../../src/watch/watch-queue.js';
import { OPEN_TEST_POLICY } from './guardrails.js';
import { type ListenerReply, listenerReply } from './listener-reply.js';
import { localEnv } from './local-env.js';
import {
  interactionBody,
  postSigned,
  ResponseUrlServer,
  type SignedResponse,
  slashCommandBody,
} from './slack-driver.js';

// The whole bot on one machine for end-to-end tests, assembled by the production composition root
// (startBot) from the environment `gpuops start` would read: only the endpoints (the simulator over
// real HTTP, the fake Slack Web API, a private Redis of this stack's own) and the timings differ, so
// a wiring change in src/app cannot pass the end-to-end tests unseen. Requests are signed as Slack
// signs them.

export const SIGNING_SECRET = 'test-signing-secret';
export const BOT_TOKEN = 'xoxb-test';
/** The key form secrets are sealed with in tests (GPUOPS_SEAL_KEY). */
export const TEST_SEAL_KEY = Buffer.alloc(32, 7);
/** Short job timings: the simulator's machines settle in a fraction of a second. */
const TEST_TIMING = { pollStartMs: 50, pollMaxMs: 200, settleTimeoutMs: 20_000 };

export interface BotStackOptions {
  readonly shape?: Shape;
  /** Simulator transition time; short so tests stay quick. */
  readonly transitionMs?: number;
  /** The simulator's clock: 'manual' holds every transition until the test calls `sim.clock.advance`. */
  readonly simClock?: 'real' | 'manual';
  /** Processes taking jobs: 0 runs the web role alone, more start further worker-role bots. Default 1. */
  readonly workers?: number;
  readonly slack?: FakeSlackOptions;
  readonly lockDurationMs?: number;
  /** How often the workers look for jobs whose lock expired (BullMQ's stalled check); default 30 s. */
  readonly stalledIntervalMs?: number;
  /** How long a first attempt keeps its progress edits back (WorkerTiming.progressQuietMs); default 0 in tests. */
  readonly progressQuietMs?: number;
  /**
   * Start the simulator's metrics side (a real Prometheus) and give the workers `snapshots` built from
   * it, as the composition root does when METRICS_* is set. Default false: `/gpu metrics` then says
   * metrics are not configured.
   */
  readonly metrics?: boolean;
  /** More of the environment gpuops reads (timings such as CLOUD_TIMEOUT_MS). */
  readonly env?: Readonly<Record<string, string>>;
  /** Keep every log line (debug and up) in `logLines`, to check what never reaches a log. */
  readonly captureLogs?: boolean;
  /**
   * The policy of the guardrails (roles, approvals, leases, audit), which are always on as in
   * production. Default OPEN_TEST_POLICY: every request runs at once and is still audited, for tests
   * of features other than the guardrails.
   */
  readonly policy?: Policy;
  /** How often the approval expiry runs when `policy` is set (else the production minute); default 200 ms. */
  readonly approvalExpiryEveryMs?: number;
  /** How often the request sweeper runs when `policy` is set (else the production 10 s); default 200 ms. */
  readonly requestSweepEveryMs?: number;
  /** How long an approved request may wait for its job to be stored (default the production 30 min). */
  readonly approvedRunWithinMs?: number;
  /**
   * Short watcher periods (`/gpu watch`, idle alerts, the waitlist: docs/watch.md) and `stack.watch`
   * to run them by hand. Without it the watchers still run, as in every worker, on the policy's periods.
   */
  readonly watch?: WatchStackOptions;
  /** Keep the private Redis's data in an append-only file, so `redisServer.kill()`/`restart()` keeps it. */
  readonly redisAppendOnly?: boolean;
}

/** The watchers in a stack (docs/watch.md): short intervals so tests wait for events, not minutes. */
export interface WatchStackOptions {
  /** Worker processes on the one watch queue, as replicas would run them; default 1. */
  readonly replicas?: number;
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
  /** The watch workers of the stack's worker processes (the first, and each replica). */
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
  /** This stack's private Redis. */
  readonly redisUrl: string;
  /** The private redis-server itself, to kill and restart it on the same port. */
  readonly redisServer: PrivateRedis;
  /** The environment the stack's bot was configured from: gpuops in another process reads the same. */
  env(): Record<string, string>;
  readonly log: Logger;
  /** The bot as startBot returned it (the first one, when several take jobs). */
  readonly bot: RunningBot;
  /** The queue prefix and store prefix of this stack's Redis keys. */
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
    /** The listener's own answer; fails saying what the person saw instead when there is none. */
    answer(): Promise<ListenerReply>;
  }>;
  /** Sends an interaction payload (view_submission, block_actions) signed as Slack does. */
  interact(payload: Readonly<Record<string, unknown>>): Promise<SignedResponse>;
  /** Request jobs waiting or delayed, not yet running (not the bot's own scheduled ones). */
  requestsQueued(): Promise<number>;
  /** Waits until the queue holds no waiting, active or delayed request job. */
  drained(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startBotStack(options: BotStackOptions = {}): Promise<BotStack> {
  const shape = options.shape ?? 'B';
  const withMetrics = options.metrics ?? false;
  const sim = await startSim({
    shape,
    port: 0,
    metrics: withMetrics,
    transitionMs: options.transitionMs ?? 300,
    ...(options.simClock ? { clock: options.simClock } : {}),
    log: () => {},
  });
  if (withMetrics && !sim.info.metricsAvailable) {
    await sim.close();
    throw new Error(`simulator metrics unavailable: ${sim.info.metricsNote}`);
  }
  const slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN], ...options.slack });
  const responses = await ResponseUrlServer.start();
  const redisServer = await startPrivateRedis({ appendOnly: options.redisAppendOnly ?? false });
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  const logLines: string[] = [];
  const log = options.captureLogs
    ? createLogger({ level: 'debug', destination: { write: (line: string) => logLines.push(line) } })
    : createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const env: Record<string, string> = {
    ...localEnv({
      sim,
      slack,
      redisUrl: redisServer.url,
      botToken: BOT_TOKEN,
      signingSecret: SIGNING_SECRET,
    }),
    GPUOPS_SEAL_KEY: TEST_SEAL_KEY.toString('hex'),
    ...(withMetrics ? { METRICS_URL: sim.info.metricsUrl, METRICS_API_KEY: sim.info.metricsApiKey } : {}),
    ...options.env,
  };

  const config = parseConfig(env, 'bot');
  const w = options.watch;
  const botOptions: BotOptions = {
    log,
    host: '127.0.0.1',
    shutdownGraceMs: 2_000,
    policy: options.policy ?? OPEN_TEST_POLICY,
    lockDurationMs: options.lockDurationMs ?? 5_000,
    ...(options.stalledIntervalMs !== undefined ? { stalledIntervalMs: options.stalledIntervalMs } : {}),
    workerConcurrency: 4,
    workerTiming: { ...TEST_TIMING, progressQuietMs: options.progressQuietMs ?? 0 },
    watchMinIntervalMs: w?.minIntervalMs ?? 5,
    ...(options.policy ? { approvalExpiryEveryMs: options.approvalExpiryEveryMs ?? 200 } : {}),
    ...(options.policy ? { requestSweepEveryMs: options.requestSweepEveryMs ?? 200 } : {}),
    ...(options.approvedRunWithinMs !== undefined
      ? { approvedRunWithinMs: options.approvedRunWithinMs }
      : {}),
    // Watchers run in every worker as in production; a test that asks for them gets short periods.
    ...(w
      ? {
          watchSchedule:
            (w.schedulers ?? true)
              ? {
                  pollEveryMs: w.pollEveryMs ?? 200,
                  idleEveryMs: w.idleEveryMs ?? 500,
                  capacityEveryMs: w.capacityEveryMs ?? 200,
                }
              : false,
        }
      : {}),
  };
  const workers = options.workers ?? 1;
  const bots: RunningBot[] = [];
  const closeAll = async () => {
    await Promise.allSettled(bots.map((b) => b.stop()));
    redis.disconnect();
    await Promise.allSettled([responses.close(), slack.close(), sim.close(), redisServer.close()]);
  };
  try {
    bots.push(await startBot(config, { ...botOptions, role: workers === 0 ? 'web' : 'all' }));
    // Further replicas: worker-role processes on the same Redis, as a scaled-out deployment runs them.
    const replicas = Math.max(workers, w?.replicas ?? 1) - 1;
    for (let n = 0; n < replicas; n++) bots.push(await startBot(config, { ...botOptions, role: 'worker' }));
  } catch (err) {
    await closeAll();
    throw err;
  }
  const bot = bots[0]!;
  const { store, queue, sealer, guardrails } = bot.parts;
  const watchParts = bot.parts.watch;
  const watch: WatchStack | undefined =
    w && watchParts
      ? {
          queue: watchParts.watchQueue,
          deps: watchParts.watchDeps,
          workers: bots.flatMap((b) => (b.parts.watch ? [b.parts.watch.watchWorker] : [])),
        }
      : undefined;
  // The test's own clients, to look at the cloud the bot changed.
  const cloud = createInfraClient({
    baseUrl: sim.info.cloudUrl,
    shape,
    tokens: staticToken(sim.info.cloudToken),
    projectId: sim.info.projectId,
  });
  const platform = createPlatformClient({ baseUrl: sim.info.platformUrl, apiKey: sim.info.platformApiKey });
  const url = `http://127.0.0.1:${bot.port}/slack/events`;
  // Requests carry a command; the bot's own scheduled jobs (catalogue, approval expiry) never end.
  const requestJobs = async (running = true) =>
    (
      await queue.getJobs([
        ...(running ? (['active'] as const) : []),
        ...(['waiting', 'delayed', 'prioritized', 'waiting-children'] as const),
      ])
    ).filter((j) => j && 'command' in (j.data as object));

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
    redisUrl: redisServer.url,
    redisServer,
    env: () => ({ ...env }),
    log,
    bot,
    queuePrefix: QUEUE_PREFIX,
    storePrefix: store.prefix,
    logLines,
    snapshots: watchParts?.watchDeps.snapshots,
    sealer,
    guardrails,
    metrics: bot.metrics,
    watch,
    async command(text, opts = {}) {
      const since = slack.mark();
      const responseUrl = responses.newUrl();
      const body = slashCommandBody({ text, responseUrl, ...opts });
      const response = await postSigned(url, body, { secret: SIGNING_SECRET });
      // Only on a failure: what else this request showed (its channel message comes after the ack).
      const seen = async () => {
        const mine = (c: RecordedCall) =>
          c.method === 'chat.postEphemeral' || String(c.body.text).includes(`/gpu ${text}`);
        await slack.waitFor('chat.postMessage', mine, 2_000, since).catch(() => undefined);
        return slack.calls
          .filter(
            (c) =>
              c.index >= since &&
              ['chat.postMessage', 'chat.postEphemeral', 'chat.update'].includes(c.method) &&
              mine(c),
          )
          .map((c) => `${c.method}: ${String(c.body.text)}`.slice(0, 300));
      };
      return { response, responseUrl, answer: () => listenerReply(text, response, seen) };
    },
    interact(payload) {
      return postSigned(url, interactionBody(payload), { secret: SIGNING_SECRET });
    },
    requestsQueued: async () => (await requestJobs(false)).length,
    async drained(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const pending = await requestJobs();
        if (pending.length === 0) return;
        if (Date.now() > deadline) {
          throw new Error(`requests still queued: ${pending.map((j) => `${j.name} (${j.id})`).join(', ')}`);
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      await cloud.close();
      await platform.close();
      await closeAll();
    },
  };
}
