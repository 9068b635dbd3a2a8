import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { QUEUE_PREFIX } from '../jobs/queue.js';
import type { Policy } from '../policy/policy.js';

// The watchers' own queue: their schedulers fire often and their drains wait out Slack's rate limits,
// so they run beside the request queue rather than in it, and never hold up a person's request. Same
// prefix (hash tag) as the request queue, so both live in one Redis Cluster slot.

export const WATCH_QUEUE_NAME = 'gpuops-watch';

export const watchJobDataSchema = z.discriminatedUnion('job', [
  /** Scheduler: one poll job per watched project, and a drain for outboxes a crash left behind. */
  z.object({ v: z.literal(1), job: z.literal('tick') }),
  z.object({ v: z.literal(1), job: z.literal('poll'), projectId: z.string().min(1) }),
  /** Scheduler: one idle check per watched project. */
  z.object({ v: z.literal(1), job: z.literal('idle.tick') }),
  z.object({ v: z.literal(1), job: z.literal('idle'), projectId: z.string().min(1) }),
  /** Scheduler: the capacity waitlist. */
  z.object({ v: z.literal(1), job: z.literal('capacity') }),
  /** Scheduler: each budget's month against its alert thresholds. */
  z.object({ v: z.literal(1), job: z.literal('budgets') }),
  /** Scheduler (cron): the daily digest of every watching channel. */
  z.object({ v: z.literal(1), job: z.literal('digest') }),
  /** Re-publishes one person's Home tab after a change to their machines (debounced by its job id). */
  z.object({ v: z.literal(1), job: z.literal('home'), userId: z.string().regex(/^[UW][A-Z0-9]+$/) }),
  /** Scheduler (cron, one per `/gpu schedule …`): one firing of a power schedule. */
  z.object({ v: z.literal(1), job: z.literal('schedule'), id: z.string().min(1) }),
  /** Sends one target's outbox in order; `token` is its lease. */
  z.object({ v: z.literal(1), job: z.literal('drain'), target: z.string().min(1), token: z.string().min(1) }),
]);
export type WatchJobData = z.infer<typeof watchJobDataSchema>;
export type WatchJobName = WatchJobData['job'];

export type WatchQueue = Queue<WatchJobData, unknown, string>;

export function createWatchQueue(connection: Redis, prefix = QUEUE_PREFIX): WatchQueue {
  return new Queue<WatchJobData, unknown, string>(WATCH_QUEUE_NAME, { connection, prefix });
}

/** Looks and checks: no retry (the next interval is the retry); removed at once so the id is free again. */
export const LOOK_JOB_OPTIONS = { attempts: 1, removeOnComplete: true, removeOnFail: true } as const;
/** Drains: a Slack hiccup is retried; the lease keeps a second drain out meanwhile. */
export const DRAIN_JOB_OPTIONS = {
  attempts: 6,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3600, count: 100 },
} as const;

export const WATCH_SCHEDULERS = {
  tick: 'watch.tick',
  idle: 'watch.idle',
  capacity: 'watch.capacity',
  digest: 'watch.digest',
  budgets: 'watch.budgets',
} as const;

export async function addWatchJob(
  queue: WatchQueue,
  data: WatchJobData,
  jobId: string,
  options: { readonly delayMs?: number } = {},
): Promise<void> {
  const valid = watchJobDataSchema.parse(data);
  const opts = valid.job === 'drain' ? DRAIN_JOB_OPTIONS : LOOK_JOB_OPTIONS;
  await queue.add(`watch.${valid.job}`, valid, {
    ...opts,
    jobId,
    ...(options.delayMs && options.delayMs > 0 ? { delay: Math.ceil(options.delayMs) } : {}),
  });
}

export interface WatchSchedule {
  /** Overrides of the policy's intervals, in ms (tests). */
  readonly pollEveryMs?: number;
  readonly idleEveryMs?: number;
  readonly capacityEveryMs?: number;
  readonly budgetsEveryMs?: number;
}

/**
 * The watchers' BullMQ job schedulers, from the policy: each fires once per period however many
 * processes call this, and upserting again only changes the period. A disabled digest is removed.
 */
export async function scheduleWatchers(
  queue: WatchQueue,
  policy: Policy,
  schedule: WatchSchedule = {},
): Promise<void> {
  const every = (ms: number) => ({ every: Math.max(100, Math.round(ms)) });
  await queue.upsertJobScheduler(
    WATCH_SCHEDULERS.tick,
    every(schedule.pollEveryMs ?? policy.watch.pollEverySeconds * 1000),
    { name: 'watch.tick', data: { v: 1, job: 'tick' }, opts: LOOK_JOB_OPTIONS },
  );
  await queue.upsertJobScheduler(
    WATCH_SCHEDULERS.idle,
    every(schedule.idleEveryMs ?? policy.idle.checkEverySeconds * 1000),
    { name: 'watch.idle.tick', data: { v: 1, job: 'idle.tick' }, opts: LOOK_JOB_OPTIONS },
  );
  await queue.upsertJobScheduler(
    WATCH_SCHEDULERS.capacity,
    every(schedule.capacityEveryMs ?? policy.watch.capacityEverySeconds * 1000),
    { name: 'watch.capacity', data: { v: 1, job: 'capacity' }, opts: LOOK_JOB_OPTIONS },
  );
  // Budget alerts follow the looks, which add to the ledger they read.
  await queue.upsertJobScheduler(
    WATCH_SCHEDULERS.budgets,
    every(schedule.budgetsEveryMs ?? policy.watch.pollEverySeconds * 1000),
    { name: 'watch.budgets', data: { v: 1, job: 'budgets' }, opts: LOOK_JOB_OPTIONS },
  );
  if (policy.digest.enabled) {
    await queue.upsertJobScheduler(
      WATCH_SCHEDULERS.digest,
      { pattern: policy.digest.cron, tz: policy.digest.tz },
      { name: 'watch.digest', data: { v: 1, job: 'digest' }, opts: LOOK_JOB_OPTIONS },
    );
  } else {
    await queue.removeJobScheduler(WATCH_SCHEDULERS.digest);
  }
}
