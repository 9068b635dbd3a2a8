import { type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { isSystemJobData, type JobData } from '../jobs/job-data.js';
import { QUEUE_NAME, QUEUE_PREFIX } from '../jobs/queue.js';
import type { WorkerDeps } from './worker-deps.js';

export interface WorkerOptions {
  readonly concurrency?: number;
  /** How long a job's lock lasts; a worker killed mid-job loses it after this and another takes over. */
  readonly lockDurationMs?: number;
  /** How often this worker looks for jobs whose worker died (their lock expired); default 30 s. */
  readonly stalledIntervalMs?: number;
  readonly prefix?: string;
  readonly autorun?: boolean;
}

/** Runs one attempt of a job: the bot's own jobs and commands each by their own processor. */
export async function processJob(job: Job<JobData>, deps: WorkerDeps, signal: AbortSignal): Promise<string> {
  // Each processor loads on its first job, not at start-up: an idle bot never needs the handlers.
  // The bot's own jobs (catalogue refresh) carry no command: they have their own schema and processor.
  if (isSystemJobData(job.data))
    return (await import('./process-system-job.js')).processSystemJob(job, deps, signal);
  return (await import('./process-command-job.js')).processCommandJob(job, deps, signal);
}

export function createWorker(
  connection: Redis,
  deps: WorkerDeps,
  options: WorkerOptions = {},
): Worker<JobData> {
  const worker = new Worker<JobData>(
    QUEUE_NAME,
    async (job, _token, signal) => processJob(job, deps, signal ?? new AbortController().signal),
    {
      connection,
      prefix: options.prefix ?? QUEUE_PREFIX,
      concurrency: options.concurrency ?? 8,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      // A worker killed mid-job is not the job's fault: let it be picked up again several times.
      maxStalledCount: 5,
      autorun: options.autorun ?? true,
    },
  );
  worker.on('error', (err) => deps.log.error({ err }, 'worker error'));
  return worker;
}
