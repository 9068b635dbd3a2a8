import { type Job, type Telemetry, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { isSystemJobData, type JobData } from '../jobs/job-data.js';
import { QUEUE_NAME, QUEUE_PREFIX } from '../jobs/queue.js';
import { inSpan } from '../obs/trace-spans.js';
import type { QueueTurn } from './machine-order.js';
import type { WorkerDeps } from './worker-deps.js';

export interface WorkerOptions {
  readonly concurrency?: number;
  /** How long a job's lock lasts; a worker killed mid-job loses it after this and another takes over. */
  readonly lockDurationMs?: number;
  /** How often this worker looks for jobs whose worker died (their lock expired); default 30 s. */
  readonly stalledIntervalMs?: number;
  readonly prefix?: string;
  readonly autorun?: boolean;
  /** Tracing on: each attempt continues the trace its request started (docs/operations.md, "Traces"). */
  readonly telemetry?: Telemetry;
}

/** Runs one attempt of a job: the bot's own jobs and commands each by their own processor. */
export async function processJob(
  job: Job<JobData>,
  deps: WorkerDeps,
  signal: AbortSignal,
  queue?: QueueTurn,
): Promise<string> {
  // Each processor loads on its first job, not at start-up: an idle bot never needs the handlers.
  // The bot's own jobs (catalogue refresh) carry no command: they have their own schema and processor.
  if (isSystemJobData(job.data))
    return (await import('./process-system-job.js')).processSystemJob(job, deps, signal);
  return (await import('./process-command-job.js')).processCommandJob(job, deps, signal, queue);
}

/** One attempt, in the span `gpuops.job <name>` when tracing is on (under BullMQ's own `process` span). */
function attempt(job: Job<JobData>, run: () => Promise<string>): Promise<string> {
  const number = job.attemptsMade + 1;
  const attributes = { 'gpuops.job.id': job.id, 'gpuops.job.name': job.name, 'gpuops.job.attempt': number };
  return inSpan(`gpuops.job ${job.name}`, attributes, async (span) => {
    try {
      const result = await run();
      span.set({ 'gpuops.outcome': 'done' });
      return result;
    } catch (err) {
      const name = (err as Error)?.name;
      const last = number >= (job.opts.attempts ?? 1) || name === 'UnrecoverableError';
      // DelayedError: it waits for an earlier request on its machine (machine-order.ts), no attempt spent.
      span.set({ 'gpuops.outcome': name === 'DelayedError' ? 'waiting' : last ? 'failed' : 'retrying' });
      throw err;
    }
  });
}

export function createWorker(
  connection: Redis,
  deps: WorkerDeps,
  options: WorkerOptions = {},
): Worker<JobData> {
  const worker: Worker<JobData> = new Worker<JobData>(
    QUEUE_NAME,
    async (job, token, signal): Promise<string> =>
      attempt(job, () =>
        processJob(job, deps, signal ?? new AbortController().signal, {
          token,
          stateOf: (id): Promise<string> => worker.backend.getState(id),
        }),
      ),
    {
      connection,
      prefix: options.prefix ?? QUEUE_PREFIX,
      concurrency: options.concurrency ?? 8,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      // A worker killed mid-job is not the job's fault: let it be picked up again several times.
      maxStalledCount: 5,
      autorun: options.autorun ?? true,
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    },
  );
  worker.on('error', (err) => deps.log.error({ err }, 'worker error'));
  return worker;
}
