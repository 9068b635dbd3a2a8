import { createHash } from 'node:crypto';
import { Queue, type Telemetry } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobData } from './job-data.js';

export const QUEUE_NAME = 'gpuops';
/** A hash tag, so every key of the queue shares one Redis Cluster slot. */
export const QUEUE_PREFIX = '{gpuops}';

export const DEFAULT_JOB_OPTIONS = {
  attempts: 6,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 7 * 24 * 3600, count: 5_000 },
  removeOnFail: { age: 14 * 24 * 3600, count: 5_000 },
} as const;

/**
 * How long BullMQ knows a job id it was given (completed jobs are removed after 7 days, failed ones
 * after 14): re-adding an id within this time makes no second job.
 */
export const JOB_IDS_KEPT_MS = DEFAULT_JOB_OPTIONS.removeOnComplete.age * 1000;

export type GpuQueue = Queue<JobData, unknown, string>;

/** `telemetry` (tracing on): each add carries the request's trace to the worker in the job's options. */
export function createQueue(connection: Redis, prefix = QUEUE_PREFIX, telemetry?: Telemetry): GpuQueue {
  return new Queue<JobData, unknown, string>(QUEUE_NAME, {
    connection,
    prefix,
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
    ...(telemetry ? { telemetry } : {}),
  });
}

/** A job id made from its parts: stable for the same request, and free of ':' as BullMQ requires. */
export function jobIdFor(...parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 24);
}
