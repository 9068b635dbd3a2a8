import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { QUEUE_PREFIX } from '../jobs/queue.js';
import type { WatchDeps } from './watch-deps.js';
import { WATCH_QUEUE_NAME, type WatchJobData } from './watch-queue.js';

export interface WatchWorkerOptions {
  readonly prefix?: string;
  /** Jobs at once: looks at different projects and drains of different channels run side by side. */
  readonly concurrency?: number;
  readonly lockDurationMs?: number;
  /** How often BullMQ looks for jobs whose worker died; default 30 s. */
  readonly stalledIntervalMs?: number;
  readonly autorun?: boolean;
}

/** The worker of the watchers' queue; run one in every worker process, as many as there are replicas. */
export function createWatchWorker(
  connection: Redis,
  deps: WatchDeps,
  options: WatchWorkerOptions = {},
): Worker<WatchJobData> {
  const worker = new Worker<WatchJobData>(
    WATCH_QUEUE_NAME,
    // The processor (looks, diffs, digests, snapshots) loads on the first job: an idle bot has none.
    async (job, _token, signal) =>
      (await import('./process-watch-job.js')).processWatchJob(
        job,
        deps,
        signal ?? new AbortController().signal,
      ),
    {
      connection,
      prefix: options.prefix ?? QUEUE_PREFIX,
      concurrency: options.concurrency ?? 8,
      lockDuration: options.lockDurationMs ?? 30_000,
      maxStalledCount: 3,
      ...(options.stalledIntervalMs !== undefined ? { stalledInterval: options.stalledIntervalMs } : {}),
      autorun: options.autorun ?? true,
    },
  );
  worker.on('error', (err) => deps.log.error({ err }, 'watch worker error'));
  return worker;
}
