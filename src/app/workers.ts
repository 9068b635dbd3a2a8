import { setTimeout as sleep } from 'node:timers/promises';
import type { FetchFunction } from '@slack/web-api';
import { WebClient, type WebClientOptions } from '@slack/web-api';
import type { Telemetry, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RouteTable } from '../cloud/routes.js';
import type { WorkerTiming } from '../commands/kit/handler-deps.js';
import type { Config } from '../config.js';
import { createHomePublisher } from '../home/create-home-publisher.js';
import { scheduleApprovalExpiry, scheduleRequestSweep } from '../jobs/guardrail-jobs.js';
import type { JobData } from '../jobs/job-data.js';
import type { GpuQueue } from '../jobs/queue.js';
import { scheduleCatalogRefresh } from '../jobs/system-jobs.js';
import type { Logger } from '../log/logger.js';
import type { BotMetrics } from '../obs/bot-metrics.js';
import type { Guardrails } from '../policy/guardrails.js';
import { askForCatalog } from '../requests/check-names.js';
import { sweepApproved } from '../requests/drive-approved.js';
import { submitPolicyAction } from '../requests/policy-action.js';
import { sweepUnposted } from '../requests/post-approval.js';
import { operableBy, recordScheduleRefusal, submitScheduledAction } from '../requests/scheduled-action.js';
import { slackDecisionPorts } from '../slack/decision-ports.js';
import { ConversationPacedWebClient } from '../slack/paced-web-client.js';
import { createReplyPort } from '../slack/reply-port.js';
import { slackRequestPorts } from '../slack/request-ports.js';
import type { Sealer } from '../store/sealed.js';
import type { Store } from '../store/store.js';
import { createWatchWorker } from '../watch/create-watch-worker.js';
import { watchScheduleTimers } from '../watch/schedule-timers.js';
import type { WatchDeps } from '../watch/watch-deps.js';
import {
  createWatchQueue,
  scheduleWatchers,
  type WatchQueue,
  type WatchSchedule,
} from '../watch/watch-queue.js';
import { createWorker } from '../workers/create-worker.js';
import type { CloudClients } from './clients.js';
import { homeChartFonts } from './home-fonts.js';
import { cloudMachineReader } from './home-machines.js';
import type { Lifecycle } from './lifecycle.js';
import { createMoney } from './money.js';
import { replicationGuards } from './replication.js';

// The worker role: the request queue's worker, the system job schedulers, and the watchers on their
// own queue (so frequent looks and rate-limited posting never hold up a person's request).

export interface WorkerTuning {
  readonly lockDurationMs?: number;
  readonly stalledIntervalMs?: number;
  readonly workerTiming?: Partial<WorkerTiming>;
  readonly workerConcurrency?: number;
  /** The watchers' periods (default the policy's), or false to schedule none (tests run them by hand). */
  readonly watchSchedule?: WatchSchedule | false;
  /** Least time between two watcher posts to one channel; default about Slack's 1 s. */
  readonly watchMinIntervalMs?: number;
  /** How often expired approvals are closed; default once a minute. */
  readonly approvalExpiryEveryMs?: number;
  /** How often the sweeper drives stuck requests forward; default every 10 s. */
  readonly requestSweepEveryMs?: number;
  /** How long an approved request may wait for its job to be stored before it lapses; default 30 min. */
  readonly approvedRunWithinMs?: number;
}

/** What the worker role runs: the request worker, and the watchers' queue with what they run with. */
export interface StartedWorkers {
  readonly worker: Worker<JobData>;
  readonly watchWorker: Worker;
  readonly watchQueue: WatchQueue;
  readonly watchDeps: WatchDeps;
}

/** After the grace period, how long released jobs get to unwind before the connections close anyway. */
const RELEASE_WAIT_MS = 5_000;

export async function startWorkers(input: {
  readonly config: Config;
  readonly clients: CloudClients;
  readonly store: Store;
  readonly sealer: Sealer;
  readonly queue: GpuQueue;
  readonly queueRedis: Redis;
  readonly workerRedis: Redis;
  readonly guardrails: Guardrails;
  readonly metrics: BotMetrics;
  readonly slackFetch: FetchFunction;
  readonly lifecycle: Lifecycle;
  readonly log: Logger;
  readonly tuning: WorkerTuning;
  readonly botUserId: string;
  /** The bot's workspace (auth.test), when Slack said it. */
  readonly botTeamId?: string | undefined;
  readonly routes: RouteTable;
  /** Tracing on: BullMQ's telemetry, so each job continues its request's trace. */
  readonly telemetry?: Telemetry | undefined;
}): Promise<StartedWorkers> {
  const { config, clients, store, queue, guardrails, metrics, lifecycle, log, tuning } = input;
  const locks = {
    ...(tuning.lockDurationMs !== undefined ? { lockDurationMs: tuning.lockDurationMs } : {}),
    ...(tuning.stalledIntervalMs !== undefined ? { stalledIntervalMs: tuning.stalledIntervalMs } : {}),
  };
  const slackOptions: WebClientOptions = {
    slackApiUrl: config.SLACK_API_URL,
    fetch: input.slackFetch,
    timeout: 15_000,
    // A job waits out a Slack hiccup, but not Slack's default half hour.
    retryConfig: { retries: 5, factor: 2, minTimeout: 500, maxTimeout: 10_000 },
  };
  // A 429 waits for its own conversation only, never every job of the process (paced-web-client.ts).
  const jobSlack = new ConversationPacedWebClient(config.SLACK_BOT_TOKEN, slackOptions);
  // The watchers' queue: its job schedulers also fire the power schedules the request worker makes.
  const watchQueue = createWatchQueue(input.queueRedis);
  // The sweeper queues approved jobs as the listener does: on two servers, or not yet.
  const lifecycleDeps = {
    queue,
    store,
    log,
    guardrails,
    sealer: input.sealer,
    ports: slackRequestPorts({ client: jobSlack, store, log }),
    chat: slackDecisionPorts({ client: jobSlack, log }),
    ...replicationGuards(input.queueRedis, config),
    runWithinMs: tuning.approvedRunWithinMs,
    countSwept: (counts: Parameters<typeof metrics.countSwept>[0]) => metrics.countSwept(counts),
  };
  // The spend ledger and the budgets, read by /gpu spend, /gpu budget and the budget alerts.
  const chartFonts = homeChartFonts(log);
  const money = createMoney({
    store,
    policy: guardrails.policy,
    fonts: chartFonts,
    leases: guardrails.leases,
  });
  metrics.watchBudgets(() => money.port.budgets());
  watchQueue.on('error', () => {}); // the connection's own listener reports it
  lifecycle.opened('watch queue', () => watchQueue.close());
  const worker = createWorker(
    input.workerRedis,
    {
      ...clients,
      slack: jobSlack,
      store,
      log,
      shape: config.CLOUD_API_SHAPE,
      defaultProjectId: config.CLOUD_PROJECT_ID,
      reply: createReplyPort({ client: jobSlack, log }),
      login: guardrails.policy.login,
      sealer: input.sealer,
      schedules: watchScheduleTimers(watchQueue),
      money: money.port,
      guardrails,
      queue,
      // The sweeper drives approved requests on and posts the cards Slack would not take before.
      sweep: async () => `${await sweepApproved(lifecycleDeps)}; ${await sweepUnposted(lifecycleDeps)}`,
      ...(tuning.workerTiming ? { timing: tuning.workerTiming } : {}),
    },
    {
      ...locks,
      ...(tuning.workerConcurrency !== undefined ? { concurrency: tuning.workerConcurrency } : {}),
      ...(input.telemetry ? { telemetry: input.telemetry } : {}),
    },
  );
  worker.on('completed', (job) =>
    metrics.jobEnded(job.name, 'done', Date.now() - (job.processedOn ?? Date.now())),
  );
  worker.on('failed', (job) => {
    if (!job) return;
    const outcome = job.finishedOn ? 'failed' : 'retried';
    metrics.jobEnded(job.name, outcome, Date.now() - (job.processedOn ?? Date.now()));
  });
  // On failure before the end of start-up; stop() drains it with the grace period instead.
  lifecycle.opened('worker', () => worker.close(true));

  // BullMQ job schedulers: each fires once per period however many workers run; upserting is idempotent.
  await scheduleCatalogRefresh(queue, {
    ...(config.CLOUD_PROJECT_ID ? { projectId: config.CLOUD_PROJECT_ID } : {}),
  }).catch((err: unknown) =>
    log.warn({ err }, 'could not schedule the catalogue refresh; modals load on demand'),
  );
  await scheduleApprovalExpiry(queue, {
    ...(tuning.approvalExpiryEveryMs !== undefined ? { everyMs: tuning.approvalExpiryEveryMs } : {}),
  }).catch((err: unknown) =>
    log.warn({ err }, 'could not schedule the approval expiry; expired cards close on their next click'),
  );
  await scheduleRequestSweep(queue, {
    ...(tuning.requestSweepEveryMs !== undefined ? { everyMs: tuning.requestSweepEveryMs } : {}),
  }).catch((err: unknown) =>
    log.warn({ err }, 'could not schedule the request sweeper; approved jobs are queued on their next click'),
  );

  // Watchers: state changes, idle GPUs, digests, the capacity waitlist, power schedules (docs/watch.md).
  const acceptDeps = {
    queue,
    store,
    log,
    guardrails,
    ports: slackRequestPorts({ client: jobSlack, store, log }),
  };
  const watchDeps: WatchDeps = {
    cloud: clients.cloud,
    platform: clients.platform,
    // A 429 reaches the outbox drain, which waits out Retry-After without holding a worker.
    slack: new WebClient(config.SLACK_BOT_TOKEN, { ...slackOptions, rejectRateLimitedCalls: true }),
    store,
    log,
    policy: guardrails.policy,
    shape: config.CLOUD_API_SHAPE,
    queue: watchQueue,
    snapshots: clients.snapshots,
    // What the policy decides (an idle machine's stop) goes through the request pipeline.
    submit: (action) => submitPolicyAction(acceptDeps, action),
    // A power schedule's firing: a request as its owner, role checked again (docs/schedules.md).
    submitScheduled: (action) => submitScheduledAction(acceptDeps, action),
    // A tag schedule acts on its owner's machines only, unless they are an admin.
    operableBy: (owner, ids) => operableBy(acceptDeps, owner, ids),
    // What the policy refused a firing (a paused schedule, others' machines) goes on the audit trail.
    refusedScheduled: (refusal) => recordScheduleRefusal(acceptDeps, refusal),
    botTeamId: input.botTeamId,
    botUserId: input.botUserId,
    // Home tabs re-published when a look changes someone's machines (docs/home.md).
    home: createHomePublisher({
      store,
      client: jobSlack,
      log,
      policy: guardrails.policy,
      approvals: guardrails.approvals,
      leases: guardrails.leases,
      groupsOf: slackRequestPorts({ client: jobSlack, store, log }).groupsOf,
      shape: config.CLOUD_API_SHAPE,
      routes: input.routes,
      defaultProjectId: config.CLOUD_PROJECT_ID,
      fonts: chartFonts,
      budgets: money.home,
      readMachines: cloudMachineReader(clients.cloud, store, log),
    }),
    budgets: money.watch,
    countBudgetAlertFailed: (reason) => metrics.countBudgetAlertFailed(reason),
    // Spend is counted in any project gpuops acts on; its dollars need that project's price list.
    askForPrices: (projectId) => askForCatalog(acceptDeps, projectId),
    ...(tuning.watchMinIntervalMs !== undefined ? { minIntervalMs: tuning.watchMinIntervalMs } : {}),
  };
  const watchWorker = createWatchWorker(input.workerRedis, watchDeps, {
    // The same lock and stalled-job check as the request worker: a drain or look whose worker (or
    // Redis primary) died mid-job is taken over as soon as a request would be.
    ...locks,
  });
  lifecycle.opened('watch worker', () => watchWorker.close());
  if (tuning.watchSchedule !== false) {
    await scheduleWatchers(watchQueue, guardrails.policy, tuning.watchSchedule).catch((err: unknown) =>
      log.warn({ err }, 'could not schedule the watchers; /gpu watch posts nothing until they are'),
    );
  }
  return { worker, watchWorker, watchQueue, watchDeps };
}

/**
 * Stops taking jobs and waits for the ones in hand. After the grace period the jobs still running are
 * cancelled: their handlers stop at the next step, BullMQ counts the attempt and schedules the job
 * again, and another worker (or this one after a restart) resumes it from its saved progress.
 */
export async function drainWorker(worker: Worker<JobData>, graceMs: number, log: Logger): Promise<void> {
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
